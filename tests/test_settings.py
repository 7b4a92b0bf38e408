"""The server's settings: a value that cannot be used is named and left unset, never an error that
breaks the app; a script may ask for strictness."""

import pytest

from core.settings import PREFIX, ServerSettings, SettingsError


def test_good_settings_are_read_from_the_environment_and_then_the_secrets(tmp_path):
    env = {PREFIX + "MAX_RUNNING": "3", PREFIX + "CORPUS_DIR": str(tmp_path)}
    s = ServerSettings.from_env(env, {"max_runs_per_owner": 5, "max_running": 9})
    assert (s.max_running, s.max_runs_per_owner, s.corpus_dir, s.problems) == (3, 5, tmp_path, ())


@pytest.mark.parametrize("name, raw, words", [
    ("INSTRUCTOR_KEY", "testkey", "too short"),
    ("CORPUS_DIR", "/no/such/folder", "not a folder"),
    ("MAX_RUNNING", "many", "not a number"),
    ("MAX_RUNNING", "0", "out of range"),
    ("MAX_CORPUS_BYTES", str(10**15), "out of range"),
    ("REGEX_TIMEOUT_S", "-1", "out of range"),
])
def test_a_setting_that_cannot_be_used_is_named_and_left_unset(name, raw, words):
    s = ServerSettings.from_env({PREFIX + name: raw, PREFIX + "MAX_RUNS_PER_OWNER": "4"})
    default = getattr(ServerSettings(), name.lower())
    assert getattr(s, name.lower()) == default          # as if it were unset
    assert s.max_runs_per_owner == 4                    # the good ones still count
    [problem] = s.problems
    assert PREFIX + name in problem and words in problem
    with pytest.raises(SettingsError, match=words):
        ServerSettings.from_env({PREFIX + name: raw}, strict=True)
