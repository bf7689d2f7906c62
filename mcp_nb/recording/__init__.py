"""Sessions as artifacts: record to a file, replay as a mock server, diff, export as tests.

Example::

    from mcp_nb.recording import save, load, diff_recordings, export_tests
    save(session, "everything.jsonl")                 # after a session ran
    recording = load("everything.jsonl")              # checked line by line
    # python -m mcp_nb.replay everything.jsonl [--http] serves it to any client
    print(diff_recordings(load("v1.jsonl"), load("v2.jsonl")).text())
    export_tests(recording, "test_everything.py", recording_path="everything.jsonl")

docs/recording.md describes the file format and each step.
"""

from .capture import capture, save
from .diff import SessionDiff, diff_recordings
from .export import export_tests
from .format import FORMAT_VERSION, Header, Record, Recording, RecordingError, load, loads
from .replayer import Replayer
from .script import Exchange, Miss, Script

__all__ = [
    "FORMAT_VERSION",
    "Exchange",
    "Header",
    "Miss",
    "Record",
    "Recording",
    "RecordingError",
    "Replayer",
    "Script",
    "SessionDiff",
    "capture",
    "diff_recordings",
    "export_tests",
    "load",
    "loads",
    "save",
]
