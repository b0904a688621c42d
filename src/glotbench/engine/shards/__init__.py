"""Sharded runs (docs/sharding.md): split a run's items into N shards by a stable hash of
(task, item id), run each shard as its own job with its own journal (``RUN/shards/K/journal.sqlite``)
on an executor (local processes, Ray tasks, a Slurm job array through submitit), then merge the
shard journals into the run's journal and aggregate exactly as an unsharded run does.

* :mod:`.assign`: which shard an item belongs to;
* :mod:`.merge`: shard journals -> the run's journal (idempotent);
* :mod:`.worker`: what one shard job does (it receives the run's plan: engine/plan.py);
* :mod:`.executors`: local / ray / slurm (:mod:`.checks`: their options, before anything runs);
* :mod:`.driver`: the run's side (plan, submit, retry, merge).
"""
