"""A class's lab moves into a process of its own at its share (Settings.class_process;
docs/architecture.md, "Sessions and threads"). Mixed into Session, whose attributes it uses:
_remote, _stop, _player, lab, lab_cls, read_only, state, command_lock, _wstep,
_framed_step, and its _command, _stop_player, _play_loop, _copy_state, _build."""

from __future__ import annotations

import asyncio
import logging

from backend import session_process
from backend.session_process import RemoteWorker

log = logging.getLogger("shaomai.sessions")


class MovesToProcess:
    @property
    def in_process(self) -> bool:
        """Does the lab run in a process of its own (a move to one finished)?"""
        return self._remote is not None and self.lab is None

    async def move_to_process(self) -> bool:
        """Move the lab into a process of its own (a class's, at its share; docs/lecture.md):
        its training then no longer shares this process's GIL with the class's fan-out. The
        state is copied between two steps and built there; play goes on, bit for bit, with
        no status change for the class to see. False where the lab stays here: it does not
        train (a real model's weights would load twice, for no training to move), it has a
        process already, or the new one failed (logged; the class goes on as it was)."""
        if self._remote is not None or self.read_only or not self.lab_cls.trains:
            return False
        await asyncio.to_thread(session_process.warm_up)  # once a server: ~2–3 s, not paused
        async with self.command_lock:  # no play, pause or set in between
            if self._remote is not None or self.state == "error":
                return False
            playing = self.state == "playing"
            await self._stop_player()
            thread_stop = self._stop
            try:
                state = await self._command(self._copy_state, True)  # work in parts finished
                self._remote = await asyncio.to_thread(RemoteWorker, self, True)
                self._stop = self._remote.stop
                await self._command(self._build, state, self._wstep, self._framed_step)
            except Exception:
                log.exception("session %s: the lab could not move to a process", self.id[:6])
                if self._remote is not None:
                    self._remote.close()
                self._remote, self._stop = None, thread_stop
                moved = False
            else:
                self.lab = None  # the copy in this process: its memory goes
                moved = True
            if playing and self.state == "playing":
                self._stop.clear()
                self._player = asyncio.create_task(self._play_loop())
        if moved:
            log.info("session %s: its lab moved to a process of its own", self.id[:6])
        return moved
