"""The models and how turns get them: the model interfaces (:mod:`~voice.runtime.model_api`), the shared
:class:`~voice.runtime.runtime.ModelRuntime`, the compute gate, the fair lock, the saved KV states, and fakes
configured by data. Imports only the base (config, models, wire, audio, clock); the backends implement its
interfaces."""
