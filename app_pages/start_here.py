"""Start here: the path of short stations a visitor follows alone, predicting before seeing; the
instructor also sees where the room is.  Stations, answers and progress are ``core.lessons``'s;
the drawing is ``ui.views.lesson_view``'s."""

import streamlit as st

from ui.views import lesson_view
from ui.plumbing.corpus_sidebar import corpus_error_banner
from ui.plumbing.identity import identity_sidebar, is_instructor
from ui.plumbing.render import md_safe

lesson_view.follow_tool()
identity_sidebar()
path = lesson_view.lesson_path()
st.title(f"🧭 {md_safe(path.title)}")
corpus_error_banner()  # a paste or upload refused here says so here, not on the next page
lesson_view.show_problems(path)
if not path.stations:
    st.info("There are no stations to show yet: the instructor can check them with "
            "`python -m core.lessons check`.")
    st.stop()
if is_instructor():  # first, where the instructor looks during a workshop
    lesson_view.room_view(path)
st.markdown(path.intro)
progress = lesson_view.my_progress()
station = lesson_view.path_picker(path, progress)
lesson_view.show_station(path, station, progress)
