"""The built-in trackers (`run --tracker NAME`), each behind `tracking.Tracker` and registered
as an entry point of `autoresearch.trackers` like a plugin's; imported only when a run uses
one, so the tracker's library costs nothing to a run without it."""
