"""A generated daily temperature series (°C) for the `temperature` lab, and its splits.

Three years of days: a yearly cycle plus persistent weather noise (AR(1): today's anomaly
keeps `phi` of yesterday's). The weather turns stormier during the second year (the noise's
scale ramps from `sigma_start` to `sigma_end`), so later days are harder to predict than
early ones. That drift is what makes a shuffled validation split look better than the future
the model will face: a time-ordered split sees it, a shuffled one averages it away.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor

SplitMode = Literal["time", "shuffled"]
SPLITS = ("train", "val", "test")


@dataclass(frozen=True)
class SeriesConfig:
    days: int = 3 * 365
    mean: float = 12.0  # yearly mean temperature, °C
    amplitude: float = 10.0  # summer peak and winter trough are mean ± amplitude
    coldest_day: int = 15  # mid-January
    phi: float = 0.7  # persistence of the weather anomaly from one day to the next
    sigma_start: float = 1.2  # day-to-day noise scale at first, °C
    sigma_end: float = 3.6  # ... and after the ramp (stormier weather)
    ramp: tuple[int, int] = (300, 750)  # days over which the noise scale ramps up
    train_frac: float = 0.70
    val_frac: float = 0.15  # test gets the rest (0.15)


def generate(cfg: SeriesConfig = SeriesConfig(), seed: int = 0) -> Tensor:
    """The series, [days] float32, reproducible from `seed`."""
    gen = torch.Generator().manual_seed(seed)
    d = torch.arange(cfg.days, dtype=torch.float64)
    season = cfg.mean - cfg.amplitude * torch.cos(2 * math.pi * (d - cfg.coldest_day) / 365.25)
    r0, r1 = cfg.ramp
    sigma = cfg.sigma_start + (cfg.sigma_end - cfg.sigma_start) * ((d - r0) / (r1 - r0)).clamp(0, 1)
    eps = torch.randn(cfg.days, generator=gen, dtype=torch.float64) * sigma
    noise = torch.empty(cfg.days, dtype=torch.float64)
    noise[0] = eps[0]
    for i in range(1, cfg.days):
        noise[i] = cfg.phi * noise[i - 1] + eps[i]
    return (season + noise).float()


def windows(series: Tensor) -> tuple[Tensor, Tensor]:
    """Inputs (t₋₂, t₋₁) and target t for every day with two days before it: [n, 2], [n]."""
    x = torch.stack([series[:-2], series[1:-1]], dim=1)  # [n, 2]
    return x, series[2:]


def split(n: int, mode: SplitMode, cfg: SeriesConfig = SeriesConfig(), seed: int = 0):
    """{"train", "val", "test"} -> example indices. "time" keeps the order (test is the
    future); "shuffled" deals the days out at random, the leak this lab is about."""
    order = torch.arange(n)
    if mode == "shuffled":
        order = torch.randperm(n, generator=torch.Generator().manual_seed(seed + 1))
    a = int(round(cfg.train_frac * n))
    b = int(round((cfg.train_frac + cfg.val_frac) * n))
    return {"train": order[:a], "val": order[a:b], "test": order[b:]}


def future(n: int, cfg: SeriesConfig = SeriesConfig()) -> Tensor:
    """The last days (the test share, in time order): what the model will really face."""
    b = int(round((cfg.train_frac + cfg.val_frac) * n))
    return torch.arange(b, n)
