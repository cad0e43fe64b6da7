"""The class poll's messages (docs/polls.md): the driver asks, viewers vote, everyone
receives the poll as it stands. Part of protocol version 1 (backend/protocol.py)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Msg(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # as protocol's


# -- polls (backend/polls.py; docs/polls.md) -------------------------------------------------
VOTER_ID = r"[A-Za-z0-9_-]{16,64}"


class PollNumeric(_Msg):
    """A numeric prediction: the value of scalar `metric` at `step` of the run."""

    metric: str = Field(min_length=1, max_length=64)
    step: int = Field(ge=1, le=10_000_000)


class PollLesson(_Msg):
    """The lesson step that asked: a page showing that lesson draws the poll's text in its
    own language (the lesson's file in that language), the counts stay the server's."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{0,63}$")
    step: int = Field(ge=0, le=1000)


class Poll(_Msg):
    """The driver asks the class: a choice poll (2-6 choices) or a numeric prediction."""

    type: Literal["poll"]
    question: str = Field(min_length=1, max_length=200)
    choices: list[Annotated[str, Field(min_length=1, max_length=80)]] | None = Field(
        default=None, min_length=2, max_length=6
    )
    numeric: PollNumeric | None = None
    answer: int | None = Field(default=None, ge=0, le=5)  # revealed when the poll closes
    lesson: PollLesson | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> Poll:
        if (self.choices is None) == (self.numeric is None):
            raise ValueError("give exactly one of `choices` and `numeric`")
        if self.answer is not None and (self.choices is None or self.answer >= len(self.choices)):
            raise ValueError("`answer` is the index of one of the choices")
        return self


class PollClose(_Msg):
    """Close voting; `answer` marks (or changes) the right choice, also on a closed poll."""

    type: Literal["poll_close"]
    answer: int | None = Field(default=None, ge=0, le=5)


class Vote(_Msg):
    """A vote: `choice` (an index) or a numeric `value`. `voter` is the page's own random
    id, so a student who reconnects keeps one vote; `poll` names the poll voted on."""

    type: Literal["vote"]
    choice: int | None = Field(default=None, ge=0, le=5)
    value: float | None = Field(default=None, ge=-1e12, le=1e12)
    poll: str | None = Field(default=None, max_length=32)
    voter: str | None = Field(default=None, pattern=f"^{VOTER_ID}$")

    @model_validator(mode="after")
    def _one_answer(self) -> Vote:
        if (self.choice is None) == (self.value is None):
            raise ValueError("give exactly one of `choice` and `value`")
        return self


class PollState(BaseModel):
    """The poll as it stands, to everyone in the session (coalesced: a few a second). A
    server message (as _Out, defined below: this block stays in one piece)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["poll_state"] = "poll_state"
    id: str
    question: str
    choices: list[str]  # empty for a numeric poll
    counts: list[int]  # per choice, or per histogram bin (numeric)
    open: bool
    voters: int
    answer: int | None = None  # the right choice, once the poll is closed
    metric: str | None = None  # numeric: the scalar, the step, the bins' edges, the truth
    step: int | None = None
    edges: list[float] | None = None
    truth: float | Literal["NaN", "Infinity", "-Infinity"] | None = None
    lesson: PollLesson | None = None  # asked by this lesson step
