"""A headless Streamlit session over the app's own websocket: what a browser tab sends and awaits,
without the browser.  Lets ``bench_server.py`` drive 30 sessions on 2 cores, where 30 Chromium
tabs would measure Chromium.

Speaks Streamlit's protocol (``BackMsg`` / ``ForwardMsg`` protobufs from the installed package):
a rerun carries the query string, the page, and the widget triggers; the run is done when the
server sends ``script_finished``.  Only what the benchmarks need: find a button by its label in
the elements the server sent, click it, time the rerun; keep the URL the app writes (as the
browser's address bar does) and reload from it; keep the cookies a proxy sets (``ui.serving.supervisor`` pins
a tab to its app process by one) and count the exceptions the app showed.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg


@dataclass
class Element:
    kind: str          # "button", "markdown", "progress", ...
    proto: object      # the element's own message (e.g. Button)
    fragment_id: str
    path: tuple = ()   # where it is drawn (delta path: 0 main, 1 sidebar, ...); a later one replaces it
    at: float = 0.0    # time.perf_counter() when it arrived


@dataclass
class Session:
    url: str                                   # http://127.0.0.1:PORT
    query: str = ""                            # e.g. "u=owner-token"
    path: str = "learn_bpe"                    # the page the tab's URL opens (a browser's /learn_bpe)
    pages: dict[str, str] = field(default_factory=dict)   # url path -> page_script_hash
    elements: list[Element] = field(default_factory=list)
    page_hash: str = ""
    kept: dict[str, dict] = field(default_factory=dict)   # widget id -> value, sent every rerun
    cookies: dict[str, str] = field(default_factory=dict)  # set by a proxy, sent back on reconnect
    exceptions: int = 0                                    # exception elements the server sent
    timers: dict[str, float] = field(default_factory=dict)  # fragment id -> run_every (s), this run's
    # the large elements kept, as the frontend keeps them: hash -> [ForwardMsg, run last used, fragment id]
    cached: dict[str, list] = field(default_factory=dict)
    runs: int = 0            # script runs finished: what a kept element's age counts
    max_age: int = 2         # the server's maxCachedMessageAge (sent in new_session's config)
    _fragments: tuple = ()   # the fragment this run reruns (none: the whole page)
    _ws: object = None

    async def connect(self) -> None:
        ws_url = self.url.replace("http://", "ws://") + "/_stcore/stream"
        cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        # ping_interval=None: as a browser, it answers the server's pings and sends none (the
        # library's own pings closed a session whose server was busy for 20 s, which a tab survives)
        self._ws = await websockets.connect(ws_url, subprotocols=["streamlit"], max_size=2**26,
                                            open_timeout=60, ping_interval=None,
                                            additional_headers={"Cookie": cookie} if cookie else None)
        for header in self._ws.response.headers.get_all("Set-Cookie"):
            name, _, value = header.split(";", 1)[0].partition("=")
            self.cookies[name.strip()] = value.strip()

    async def reload(self, timeout: float = 300.0) -> float:
        """What a browser's reload does: a new session from the URL alone (no widget values);
        the seconds from closing the old websocket to the new run's ``script_finished``."""
        start = time.perf_counter()
        await self.close()
        self.kept, self.elements, self.cached, self.runs = {}, [], {}, 0
        await self.connect()
        await self.rerun(timeout=timeout)
        return time.perf_counter() - start

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()

    async def rerun(self, page: str = "", trigger: Element | None = None,
                    timeout: float = 300.0, fragment: str = "") -> float:
        """One script run: the whole page; a fragment when ``trigger`` sits in one; or ``fragment``
        run again by its own timer (``run_every``), as the browser asks for it.  Returns the
        seconds from sending the request to the server's ``script_finished``."""
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = self.query
        state.page_script_hash = self.pages.get(page, self.page_hash) if page else self.page_hash
        if not state.page_script_hash:  # a first run: the page the URL names, as a browser opens it
            state.page_name = self.path
        for widget_id, value in self.kept.items():
            widget = state.widget_states.widgets.add()
            widget.id = widget_id
            for name, v in value.items():
                setattr(widget, name, v)
        state.cached_message_hashes.extend(self.cached)
        if trigger is not None:
            widget = state.widget_states.widgets.add()
            widget.id = trigger.proto.id
            widget.trigger_value = True
            fragment = trigger.fragment_id
        else:
            state.is_auto_rerun = bool(fragment)
        state.fragment_id = fragment
        self._fragments = (fragment,) if fragment else ()
        start = time.perf_counter()
        await self._ws.send(msg.SerializeToString())
        if fragment:
            self.elements = [e for e in self.elements if e.fragment_id != fragment]
        else:
            self.elements, self.timers = [], {}
        await asyncio.wait_for(self._read_until_finished(), timeout)
        return time.perf_counter() - start

    async def _read_until_finished(self) -> None:
        while True:
            fwd = self._from_cache(await self._ws.recv())
            kind = fwd.WhichOneof("type")
            if kind == "new_session":
                self.page_hash = fwd.new_session.page_script_hash
                self.max_age = fwd.new_session.config.max_cached_message_age
            elif kind == "navigation":
                self.page_hash = fwd.navigation.page_script_hash
                self.pages = {p.url_pathname: p.page_script_hash for p in fwd.navigation.app_pages}
            elif kind == "auto_rerun":
                self.timers[fwd.auto_rerun.fragment_id] = fwd.auto_rerun.interval
            elif kind == "page_info_changed":
                self.query = fwd.page_info_changed.query_string
            elif kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                element = fwd.delta.new_element
                which = element.WhichOneof("type")
                proto = getattr(element, which)
                self.elements.append(Element(which, proto, fwd.delta.fragment_id,
                                             tuple(fwd.metadata.delta_path), time.perf_counter()))
                self._take_set_value(proto)
                self.exceptions += which == "exception"
            elif kind == "script_finished":
                if fwd.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    self._age_cache()
                    self._drop_inactive()
                return

    def _from_cache(self, data: bytes) -> ForwardMsg:
        """The message as the frontend reads it: a reference replaced by the element it names (with
        the reference's place), a large element kept (``ForwardMessageCache.processMessagePayload``)."""
        fwd = ForwardMsg()
        fwd.ParseFromString(data)
        if fwd.WhichOneof("type") == "ref_hash":
            entry = self.cached[fwd.ref_hash]  # a miss is a bug the frontend raises too
            entry[1] = self.runs
            msg = ForwardMsg()
            msg.CopyFrom(entry[0])
            msg.metadata.CopyFrom(fwd.metadata)
            return msg
        if fwd.metadata.cacheable and fwd.hash:
            if fwd.hash in self.cached:
                self.cached[fwd.hash][1] = self.runs
            else:
                self.cached[fwd.hash] = [fwd, self.runs, fwd.delta.fragment_id]
        return fwd

    def _drop_inactive(self) -> None:
        """After a whole page's run, the values of widgets it no longer drew are no longer sent, as
        the frontend's ``WidgetStateManager.removeInactive``: a paste box the app replaced (with a new
        key) stops sending the pasted megabytes at every rerun."""
        if not self._fragments:
            drawn = {getattr(e.proto, "id", None) for e in self.elements}
            self.kept = {widget: value for widget, value in self.kept.items() if widget in drawn}

    def _age_cache(self) -> None:
        """A finished run ages the kept elements; those unused for over ``max_age`` runs go (a
        fragment's run ages only that fragment's), as ``ForwardMessageCache.incrementRunCount``."""
        self.runs += 1
        for key, (_, used, fragment) in list(self.cached.items()):
            if self._fragments and fragment not in self._fragments:
                continue
            if self.runs - used > self.max_age:
                del self.cached[key]

    def _take_set_value(self, proto) -> None:
        """A value the server sets on a text box replaces what the tab kept, as a browser's box
        shows (and from then on sends) what the app put in it."""
        if getattr(proto, "set_value", False) and proto.id in self.kept and hasattr(proto, "value"):
            self.kept[proto.id] = {"string_value": proto.value}

    def widget(self, label: str) -> Element:
        for e in self.elements:
            if getattr(e.proto, "label", None) == label and getattr(e.proto, "id", ""):
                return e
        raise LookupError(f"no widget labelled {label!r}")

    def keep(self, label: str, **value) -> None:
        """Give the widget labelled ``label`` a value (``string_value="..."``, ``int_value=3``)
        from the next rerun on, as a browser keeps sending what a person typed."""
        self.kept[self.widget(label).proto.id] = value

    def button(self, label: str) -> Element:
        for e in self.elements:
            if e.kind == "button" and e.proto.label == label:
                return e
        labels = [e.proto.label for e in self.elements if e.kind == "button"]
        raise LookupError(f"no button {label!r} among {labels}")

    def shown(self) -> list[Element]:
        """What the page shows after the last run: the latest element at each place (a progress
        bar emptied once its work is done is gone)."""
        latest = {e.path: e for e in self.elements}
        return [e for e in latest.values() if e.kind != "empty"]

    def texts(self) -> list[str]:
        """Markdown, captions and alerts the last runs drew (to read a page's messages)."""
        out = []
        for e in self.elements:
            body = getattr(e.proto, "body", None)
            if isinstance(body, str) and body:
                out.append(body)
        return out
