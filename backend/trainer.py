"""The trainer: a training lab declares its arms, data, loss and picture; the engine trains.

A `TrainingLab` says how its Params become one or more arms (`arms()`: a model build, an
optimizer config, a seed, a label), what one batch is (`batch(gen)`, shared by every arm:
the arms step in lockstep on the same data), the loss of one arm (`loss(arm, batch)`), and
optionally extra scalars, an evaluation and the arm's picture. The engine owns the loop:
zero_grad, backward, clipping (its coefficient as the scalar `clip_coef`), per-stage
gradient norms as scalars (`grad_norm.<stage>`), the live learning rate and its schedule,
the optimizer step, evaluation cadence, divergence per arm, and a `state_dict` holding every
arm's model and optimizer and every generator, so a fork continues on the same batches.

Scalars: one arm keeps plain names (`loss`, `grad_norm.embed`, ...); several arms name
theirs `arm.<i>.loss`, ... and the top-level `loss` is the mean of the finite arms' losses
(non-finite only once every arm has diverged, which ends the session). Tensors of several
arms are prefixed `arm.<i>.`; a captured frame's meta has `arms: [{label, title, diverged}]`.
The contract is written out in docs/trainer.md.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, ClassVar

import torch
from torch import Tensor, nn

from backend import trainer_state
from backend.arms import Arm, ArmSpec, update_size  # Arm, ArmSpec: labs import them here
from backend.in_parts import Parts, advance, pending, whole
from backend.labs.base import Frame, Lab, LabParams, TensorOut
from backend.schedules import StepsAndWarmup  # noqa: F401 - labs import it here
from backend.side_by_side import side_by_side
from backend.worker import manual_seed
from models.stages import Stages, grad_stages, stage_grad_norms


class TrainingLab(Lab):
    """A lab declares; the engine trains. A subclass implements `arms`, `batch` and `loss`,
    and may implement the other hooks; it does not write zero_grad/backward/step."""

    # -- declared knobs (class attributes, or properties reading self.params) -------------
    clip_norm: ClassVar[float | None] = None  # clip every arm's gradient to this norm
    eval_every: ClassVar[int | None] = None  # steps between `evaluate` calls (None: never)
    stream_lr: ClassVar[bool] = False  # report the live learning rate as scalar `lr`
    stream_grad_norms: ClassVar[bool] = True  # report `grad_norm.<stage>` every step
    # Measure each update's size (the weights copied before the step, one fused norm
    # after): scalars `update_max` (largest |Δw|) and `update_norm` (‖Δw‖), and
    # `arm.update_max` / `arm.update_norm` for arm_scalars. Off by default: it costs a copy.
    stream_update_size: ClassVar[bool] = False
    # True: several arms may train at once on a spare core (backend/side_by_side.py; which
    # labs may, in docs/trainer.md: hooks that read only their arm, no dropout).
    parallel_arms: ClassVar[bool] = False

    def __init__(self, params: LabParams, seed: int, device: torch.device):
        super().__init__(params, seed, device)
        self.t = 0  # optimizer updates taken (a step with no batch takes none)
        self.picture_s = 0.0  # seconds spent drawing pictures so far (the pacer reads it)
        self.setup()
        self.data_gen = self.data_generator()
        specs = self.arms()
        if not specs:
            raise ValueError(f"lab {self.id!r} declared no arms")
        self.arm_list = [self.__make_arm(i, s, len(specs) > 1) for i, s in enumerate(specs)]
        self.built()

    # -- what a lab declares --------------------------------------------------------------
    def setup(self) -> None:
        """Build the data and anything else the lab needs, before its arms are built."""

    def arms(self) -> list[ArmSpec]:
        """The arms to train, from `self.params` (one for a single-model lab). Also asked
        after a live change: a changed optimizer config there is applied to the running arm."""
        raise NotImplementedError

    def built(self) -> None:
        """After the arms are built (e.g. keep a copy of the first weights)."""

    def data_generator(self) -> torch.Generator:
        """The generator every batch is drawn from (saved in state_dict)."""
        return torch.Generator().manual_seed(self.seed)

    def batch(self, gen: torch.Generator) -> Any:
        """One batch, shared by every arm (lockstep). None: nothing to learn this step (no
        update; the arms' scalars are still measured)."""
        raise NotImplementedError

    def loss(self, arm: Arm, batch: Any) -> Tensor | tuple[Tensor, Any]:
        """The training loss of one arm on the batch; or (loss, out) to hand `out` (e.g.
        the logits) to `arm_scalars`."""
        raise NotImplementedError

    def arm_scalars(self, arm: Arm, batch: Any, out: Any) -> dict[str, float]:
        """Extra scalars of one arm, after its optimizer step (batch and out are None when
        nothing was learned, or at a snapshot). A `loss` here replaces the batch's loss
        (e.g. the whole data set's loss after the step)."""
        return {}

    def schedule(self, t: int) -> float:
        """The learning-rate multiplier at update t (0-based): warm-up, decay, ..."""
        return 1.0

    def eval_due(self, arm: Arm, scalars: dict[str, float]) -> bool:
        """Evaluate after this step? (`self.t` is the updates taken, this one included.)"""
        every = self.eval_every
        return bool(every) and self.t % every == 0

    def evaluate(self, arm: Arm) -> dict[str, float]:
        """Held-out scalars of one arm, merged into the step's scalars when due."""
        return {}

    def evaluate_in_parts(self, arm: Arm) -> Parts[dict[str, float]] | None:
        """When due, an evaluation too long for one step as parts on a frozen copy of the
        model (backend/in_parts.py, docs/trainer.md); None (the default): `evaluate`."""
        return None

    def stages(self, model: nn.Module) -> Stages:
        """The gradient stages of a model (default: models.stages' shared naming)."""
        return grad_stages(model)

    def picture(self, arm: Arm) -> list[TensorOut] | tuple[list[TensorOut], dict[str, Any]]:
        """One arm's tensors for a sent frame (and optionally its meta). With
        `pictures_later`, it may be drawn while another backward runs (with several arms,
        the next arm's in this step; the last arm's, the next step's first): read only this
        arm's weights and what the step does not change (not .grad, not the batch cursor)."""
        return []

    def shared_picture(self) -> list[TensorOut]:
        """Tensors every arm shares (a contour, the data points): one unprefixed copy in each
        sent frame, after the arms' pictures. Drawn when the frame is finished, like the
        arms' pictures (with `pictures_later`, beside the next step's first backward)."""
        return []

    def frame_meta(self) -> dict[str, Any]:
        """The meta of a sent frame, fixed when the step ends."""
        return {}

    def snapshot_scalars(self, arm: Arm) -> dict[str, float]:
        """One arm's scalars without stepping (step 0, after a live change)."""
        return self.arm_scalars(arm, None, None)

    def finish_parts(self) -> None:
        """Finish each arm's evaluation in parts now (before a fork or a move: the work,
        a generator, cannot travel with the state); its numbers go with the next step."""
        for arm in self.arm_list:
            if arm.evaluating is not None:
                arm.evaluated, arm.evaluating = whole(arm.evaluating), None

    def lab_state(self) -> dict[str, Any]:
        """The lab's own state for a fork (cursors, counters), beside the engine's."""
        return {}

    def load_lab_state(self, state: dict[str, Any]) -> None:
        return None

    # -- single-arm conveniences -----------------------------------------------------------
    @property
    def arm(self) -> Arm:
        return self.arm_list[0]

    @property
    def model(self) -> nn.Module:
        return self.arm_list[0].model

    @property
    def opt(self) -> torch.optim.Optimizer:
        return self.arm_list[0].optimizer

    # -- the engine -----------------------------------------------------------------------
    def __make_arm(self, i: int, spec: ArmSpec, several: bool) -> Arm:
        manual_seed(spec.seed)
        model = spec.build().to(self.device)
        return Arm(
            index=i,
            spec=spec,
            model=model,
            optimizer=spec.optim.build(model.parameters()),
            generator=torch.Generator().manual_seed(spec.seed),
            stages=self.stages(model),
            params=list(model.parameters()),
            prefix=f"arm.{i}." if several else "",
        )

    def update_live(self, params: LabParams) -> None:
        """Live params: every arm's optimizer takes its new config's numbers (lr, β, ...)."""
        self.params = params
        for arm, spec in zip(self.arm_list, self.arms(), strict=True):
            if spec.optim != arm.spec.optim:
                arm.spec = replace(arm.spec, optim=spec.optim)
                spec.optim.apply(arm.optimizer)

    def step(self, capture: bool, later: bool = False) -> Frame:
        mult = self.schedule(self.t)
        batch = self.batch(self.data_gen)
        if batch is not None:
            self.t += 1
        later = later and capture and self.pictures_later
        # Several arms drawn later: arm i's picture beside arm i+1's backward (the last
        # arm's beside the next step's first, with the frame's finish).
        drawn: dict[int, Any] | None = {} if later and len(self.arm_list) > 1 else None
        live = [arm for arm in self.arm_list if not arm.diverged]

        def train(arm: Arm) -> None:
            t0 = time.perf_counter()
            arm.scalars = self.__train(arm, batch, mult)
            arm.train_s = time.perf_counter() - t0

        # Side by side only with no picture to draw beside a backward pass (that one hands
        # arm i's picture to arm i+1's backward, in order). The slowest arms are taken
        # first, so that no thread starts the longest one last (ffn-moe: its MoE arm).
        spread = self.parallel_arms and self.may_spread and drawn is None and len(live) > 1
        longest_first = sorted(live, key=lambda a: -a.train_s) if spread else live
        if spread and self._pending is None and side_by_side(longest_first, train):
            return self.__frame(self.__scalars(), capture)
        for arm in self.arm_list:
            if not arm.diverged:
                train(arm)
            if drawn is not None and arm.index < len(self.arm_list) - 1:
                self.__draw_beside(arm, drawn)
        return self.__frame(self.__scalars(), capture, later, drawn)

    def __timed(self, draw: Callable[..., Any], *args: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return draw(*args)
        finally:
            self.picture_s += time.perf_counter() - t0

    def __draw_beside(self, arm: Arm, drawn: dict[int, Any]) -> None:
        """Leave the arm's picture for the next backward pass (another arm's: this arm's
        weights no longer change this step), after any job already waiting for it."""

        def job() -> None:
            if arm.index not in drawn:  # not yet drawn by a frame finished in line
                drawn[arm.index] = self.__timed(self.picture, arm)

        waiting = self._pending
        if waiting is None:
            self._pending = job
        else:

            def both() -> None:
                waiting()
                job()

            self._pending = both

    def __train(self, arm: Arm, batch: Any, mult: float) -> dict[str, float]:
        """One arm's update on the shared batch; its scalars, unprefixed."""
        scalars: dict[str, float] = {}
        if batch is not None:
            lr = arm.spec.optim.lr * mult
            opt = arm.optimizer
            for group in opt.param_groups:
                group["lr"] = lr
            loss, out = self.__loss(arm, batch)
            opt.zero_grad(set_to_none=True)
            with self.beside_backward():  # a deferred picture is drawn meanwhile
                loss.backward()
            if self.stream_grad_norms and arm.stages:
                arm.grad_norms = stage_grad_norms(arm.stages)
            clip = self.clip_norm
            if clip is not None:
                total = float(torch.nn.utils.clip_grad_norm_(arm.params, clip))
                coef = min(1.0, clip / (total + 1e-6)) if math.isfinite(total) else 0.0
            sized = self.stream_update_size
            if sized:
                with torch.no_grad():
                    before = torch._foreach_mul(arm.params, 1.0)  # a copy of the weights
            opt.step()
            scalars["loss"] = arm.last_loss = loss.item()
            if self.stream_lr:
                scalars["lr"] = lr
            if clip is not None:
                scalars["clip_coef"] = coef
            if sized:
                scalars.update(update_size(arm, before))
        else:
            out = None
        scalars.update(self.arm_scalars(arm, batch, out))
        if arm.evaluated:  # one finished between two steps (finish_parts)
            scalars.update(arm.evaluated)
            arm.evaluated = {}
        work = arm.evaluating
        if work is None and self.eval_due(arm, scalars):
            work = self.evaluate_in_parts(arm)
            if work is None:
                scalars.update(self.evaluate(arm))
        if work is not None:  # one part a step; the last one's step gets the scalars
            done = advance(work)
            arm.evaluating = work if pending(done) else None
            scalars.update({} if pending(done) else done)
        if batch is not None and self.stream_grad_norms:  # last: the page reads the first few
            for label, g in zip(arm.stages, arm.grad_norms, strict=True):
                scalars[f"grad_norm.{label[0]}"] = g
        loss_now = scalars.get("loss")
        if loss_now is not None and not math.isfinite(loss_now):
            arm.diverged = True
        return scalars

    def __loss(self, arm: Arm, batch: Any) -> tuple[Tensor, Any]:
        got = self.loss(arm, batch)
        return got if isinstance(got, tuple) else (got, None)

    def gradient_at_rest(self, arm: Arm, batch: Any) -> Tensor:
        """The loss of `batch` and its gradient at the current weights, without a step (a
        snapshot's). The stage norms land in `arm.grad_norms`; p.grad holds the gradient
        until the caller's `arm.optimizer.zero_grad()`."""
        loss, _ = self.__loss(arm, batch)
        arm.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if arm.stages:
            arm.grad_norms = stage_grad_norms(arm.stages)
        return loss

    def __scalars(self) -> dict[str, float]:
        """The step's scalars: one arm's as they are; several, prefixed, with a mean loss."""
        if len(self.arm_list) == 1:
            return self.arm_list[0].scalars
        losses = [a.scalars.get("loss") for a in self.arm_list if not a.diverged]
        finite = [v for v in losses if v is not None]
        out: dict[str, float] = {}
        if finite:
            out["loss"] = sum(finite) / len(finite)
        elif any(a.scalars.get("loss") is not None for a in self.arm_list):
            out["loss"] = math.nan  # every arm has diverged: the session stops
        for arm in self.arm_list:
            for k, v in arm.scalars.items():
                out[arm.prefix + k] = v
            if arm.diverged:
                out[arm.prefix + "diverged"] = 1.0
        return out

    def __frame(
        self,
        scalars: dict[str, float],
        capture: bool,
        later: bool = False,
        drawn: dict[int, Any] | None = None,
    ) -> Frame:
        frame = Frame(scalars=scalars)
        if not capture:
            return frame
        meta = self.frame_meta()  # fixed now: the step may be left before the picture
        meta["arms"] = [
            {"label": a.spec.label, "title": a.spec.title, "diverged": a.diverged}
            for a in self.arm_list
        ]

        def finish() -> None:
            tensors: list[TensorOut] = []
            extra: dict[str, Any] = {}
            several = len(self.arm_list) > 1
            for arm in self.arm_list:
                got = drawn.get(arm.index) if drawn else None
                if got is None:
                    got = self.__timed(self.picture, arm)
                    if drawn is not None:
                        drawn[arm.index] = None  # drawn here: a job still waiting skips it
                outs, arm_meta = got if isinstance(got, tuple) else (got, {})
                if several:
                    tensors += [replace(t, name=arm.prefix + t.name) for t in outs]
                    meta["arms"][arm.index].update(arm_meta)
                else:
                    tensors += outs
                    extra.update(arm_meta)
            tensors += self.__timed(self.shared_picture)
            frame.tensors = tensors
            frame.meta = {**extra, **meta}

        if later:
            frame.finish = finish
        else:
            finish()
        return frame

    def snapshot(self) -> Frame:
        for arm in self.arm_list:
            arm.scalars = self.snapshot_scalars(arm)
        return self.__frame(self.__scalars(), True)

    # -- persistence (backend/trainer_state.py) -------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return trainer_state.state_of(self)

    def load_state_dict(self, state: dict[str, Any]) -> None:
        trainer_state.load(self, state)
