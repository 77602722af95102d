"""A progress display for the links commands: a bar redrawn in place on a terminal, a plain line
per step otherwise (logs, pipes), on the command's stderr so that its output stays clean."""

from __future__ import annotations

from django.core.management.base import OutputWrapper

_BAR = 30


class Progress:
    """Call it with (done, total) as work advances; `finish()` ends the bar's line.

    Off a terminal only runs of more than one step are shown (a small file needs no progress
    line), one line per call."""

    def __init__(self, stream: OutputWrapper, unit: str):
        self.stream = stream
        self.unit = unit
        self.tty = stream.isatty()
        self.drawn = False
        self.calls = 0

    def __call__(self, done: int, total: int) -> None:
        self.calls += 1
        if self.tty:
            filled = round(_BAR * done / total) if total else _BAR
            self.stream.write(
                f"\r[{'#' * filled}{'.' * (_BAR - filled)}] {done:,}/{total:,} {self.unit}",
                ending="",
            )
            self.stream.flush()
            self.drawn = True
        elif done < total or self.calls > 1:
            self.stream.write(f"{done:,}/{total:,} {self.unit}")

    def finish(self) -> None:
        if self.drawn:
            self.stream.write("")
            self.drawn = False
