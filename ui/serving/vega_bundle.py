"""Vega, Vega-Lite and Vega-Embed for the browser's step view, served by Streamlit's static file
route (``server.enableStaticServing`` in ``.streamlit/config.toml``) from ``static/vendor/``.

The bundle is the one the Vega team publishes for offline pages (``vl_convert.javascript_bundle``,
the same that Altair inlines into a saved chart): a workshop's server may have no internet, so
no CDN.  It is written once per installation, on the first page that needs it (a second or two), under
a name that carries its versions, so a browser may cache it and an upgrade is a new file.  It is
fetched by the browser once per page load, never sent through the websocket.
"""

from __future__ import annotations

import threading
from pathlib import Path

from core.atomic import atomic_write

STATIC = Path(__file__).resolve().parents[2] / "static"  # Streamlit's app static folder
ROUTE = "app/static"  # where Streamlit serves STATIC, relative to the app's base URL
_lock = threading.Lock()
_url: str | None = None


def bundle_url() -> str:
    """The bundle's path relative to the app's base URL, written first where it is missing."""
    global _url
    with _lock:
        if _url is None:
            import vl_convert

            name = (f"vega-{vl_convert.get_vega_version()}-lite-{vl_convert.get_vegalite_versions()[-1]}"
                    f"-embed-{vl_convert.get_vega_embed_version()}.js")
            path = STATIC / "vendor" / name
            if not path.is_file():
                path.parent.mkdir(parents=True, exist_ok=True)
                with atomic_write(path) as f:
                    f.write(vl_convert.javascript_bundle())
            _url = f"{ROUTE}/vendor/{name}"
    return _url
