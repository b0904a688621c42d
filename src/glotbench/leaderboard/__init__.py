"""A self-hostable leaderboard with hidden labels (HuLU-style): users upload predictions, the
server scores them against gold labels only it holds, administrators approve results, and the
public pages show approved results per task and overall, in Hungarian and English.

The submission file format lives in :mod:`glotbench.leaderboard.submission_format`, which has no
web dependencies; import :func:`glotbench.leaderboard.app.create_app` for the web app."""
