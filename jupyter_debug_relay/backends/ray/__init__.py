"""Ray: a cluster's paused tasks and actors (its state API), and the runtime environment for debugging its jobs."""

from .cluster import RayTask, listening, ray_available
from .runtime import ray_runtime_env

__all__ = ["RayTask", "listening", "ray_available", "ray_runtime_env"]
