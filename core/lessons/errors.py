"""What goes wrong with a lesson: a station file that cannot be used, an answer not ready yet.
(Progress that is not the viewer's to read is refused with ``core.room.owners.RunAccessError``.)"""

from __future__ import annotations


class LessonError(ValueError):
    """A station that cannot be used or answered; the message says why, for a teacher."""


class StationFileError(LessonError):
    """A station file with a mistake: the message names the file, then the problem."""

    def __init__(self, path, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path, self.problem = path, problem


class AnswerNotReady(LessonError):
    """The answer comes from something still under way (the room's GPT runs): try again later."""
