"""The help text of ``-M/--model-args``, shared by every command that loads a model (the loader is
:func:`glotbench.models.registry.load_cli_model`)."""

MODEL_ARGS_HELP = ("Backend option KEY=VALUE (repeat or comma-separate), as in glotbench run -M: base_url=http://..., "
                   "api_key_env=NAME, chat=false, n_ctx=8192 ...")
