"""Runs the meta-human backend (written for pydantic 2) on Debian 12's pydantic 1.10.

Imported by Python at start-up because this folder is on PYTHONPATH (bench/peer/run.ts puts it
there). The backend's source is left untouched: the only pydantic-2 names it uses are
field_validator and model_validator (app/api/chat.py), so those two are added to the pydantic
module, each mapped onto its pydantic-1 counterpart. Nothing else is changed. edge-tts is not
bridged: the backend imports it only inside a TTS call, which the benchmark never makes.
"""

import pydantic

if not hasattr(pydantic, "field_validator"):

    def field_validator(*fields, mode="after", check_fields=None):
        # pydantic 1's validator runs after the field's own parsing, as mode="after" does;
        # "before" is pre=True. It accepts a classmethod, as the backend writes them.
        return pydantic.validator(*fields, pre=(mode == "before"), allow_reuse=True)

    def model_validator(*, mode):
        if mode != "after":
            raise NotImplementedError("bench/peer/compat bridges model_validator(mode='after') only")

        def decorate(function):
            # pydantic 2 calls an "after" model validator on the built instance; pydantic 1's
            # root validator gets the field values. Build the instance from the values without
            # validating them again, run the backend's method on it, hand its fields back.
            def root(cls, values):
                instance = cls.construct(**values)
                return dict(function(instance).__dict__)

            root.__name__ = function.__name__
            return pydantic.root_validator(skip_on_failure=True, allow_reuse=True)(root)

        return decorate

    pydantic.field_validator = field_validator
    pydantic.model_validator = model_validator
