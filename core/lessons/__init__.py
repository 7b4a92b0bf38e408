"""Self-guided lessons: the Start here path of stations, each asking a prediction that ``core``
answers on the station's own data; each attendee's progress; the room's counts for the
instructor.  No Streamlit here: a script can do everything the Start here page does.

- ``content``       station files (one TOML file each, in ``lessons/``), read and checked;
- ``computations``  the named computations that answer the questions (a registry, no ``eval``);
- ``tool_facts``    what each station's tool shows ({merges_asked}, which step highlights what),
                    the facts its words quote; ``words`` fills them into what the attendee reads;
- ``claims``        a station's words checked against its tool (merges asked vs learned, typed
                    figures, step words);
- ``room_runs``     the char vs BPE station's two GPT runs, trained once for the whole room;
- ``insight_questions``  the vocabulary-size and language stations' computations (``core.insights``);
- ``token_questions``    the spelling, numbers and formats stations' computations (``core.insights``);
- ``chat_questions``     the chat templates station's computation (``core.chat``);
- ``verdict``       a prediction checked, with the feedback that says why;
- ``progress``      per-attendee progress files and the room's counts;
- ``check``         ``python -m core.lessons check``, run before a workshop.

    >>> import tempfile
    >>> from core.lessons import ProgressStore, answer_station, load_path
    >>> station = load_path().station("02_first_merge")
    >>> store = ProgressStore(tempfile.mkdtemp())   # the app's is under its runs folder
    >>> verdict = answer_station(store, "someone-0123456789", station, "e + s")
    >>> verdict.right, verdict.progress.done
    (False, False)
    >>> answer_station(store, "someone-0123456789", station, "l + o").progress.done
    True
"""

from .chat_questions import costlier_template
from .computations import COMPUTATIONS, Answer, StationData, format_number
from .content import LessonPath, Station, default_lessons_dir, load_path, read_station
from .errors import AnswerNotReady, LessonError, StationFileError
from .insight_questions import costliest_language, lowest_bpc_vocabulary
from .progress import ProgressStore, RoomRow, StationProgress
from .room_runs import ROOM_OWNER, progress_line, room_runs, start_room_runs
from .token_questions import cheapest_format, digit_groups, word_tokens
from .tool_facts import TOOL_FACTS, tool_facts
from .verdict import Given, Verdict, answer_station, compute_answer, explanation, hint, is_right, read_given
from .words import Words, station_facts, station_words

__all__ = [
    "COMPUTATIONS", "ROOM_OWNER", "TOOL_FACTS", "Answer", "AnswerNotReady", "Given", "LessonError",
    "LessonPath", "ProgressStore", "RoomRow", "Station", "StationData", "StationFileError", "StationProgress",
    "Verdict", "Words", "answer_station", "cheapest_format", "compute_answer", "costlier_template",
    "costliest_language",
    "default_lessons_dir", "digit_groups", "explanation", "format_number", "hint", "is_right", "load_path",
    "lowest_bpc_vocabulary", "progress_line", "read_given", "read_station", "room_runs", "start_room_runs",
    "station_facts", "station_words", "tool_facts", "word_tokens",
]
