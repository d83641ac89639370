"""A question set evaluated across the index's history: ``proj.evaluate(dataset)``.

``dataset`` reads the forms question sets come in (``EvalDataset``); ``metrics`` scores one
run against one question; ``judge`` asks an LLM for faithfulness and correctness;
``run`` walks the versions, logs every cell as a run and reads a finished matrix back
from the log; ``matrix`` is the result (``HistoryMatrix``) and its regressions.
"""
