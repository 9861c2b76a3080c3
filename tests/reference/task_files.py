"""The ../shared/data files each of the seven lm-eval tasks reads, relative to that folder.

The first file of each task is the one focal-eval's reader takes (`run --data TASK=PATH`);
any others sit beside it (PIQA's labels). Kept apart from lm_eval_parity_reference.py so
that scripts run under a python without lm-eval (bench/lm_eval_compare.py) can share it.
../shared has only ARC-Challenge's dev split: it stands in for lm-eval's test split.
"""

# The same tasks (and WinoGrande) in the data cache scripts/fetch_data.sh fills
# (datasets/catalog.json), already in the schemas of the HF datasets lm-eval
# loads: ARC allenai/ai2_arc, HellaSwag's rows, PIQA with its labels, BoolQ
# aps/super_glue, WinoGrande allenai/winogrande.
FETCHED_FILES = {
    "arc_easy": ["arc/ARC-Easy-Test.jsonl"],
    "arc_challenge": ["arc/ARC-Challenge-Test.jsonl"],
    "hellaswag": ["hellaswag/hellaswag_val.jsonl"],
    "piqa": ["piqa/valid.jsonl"],
    "boolq": ["boolq/validation.jsonl"],
    "winogrande": ["winogrande/winogrande_xl_dev.jsonl"],
}

DATA_FILES = {
    "arc_easy": ["arc/ARC-Easy-Test.jsonl"],
    "arc_challenge": ["arc/ARC-Challenge-Dev.jsonl"],
    "hellaswag": ["hellaswag/hellaswag_val_full.txt.bz2"],
    "piqa": ["piqa/valid.jsonl", "piqa/valid-labels.lst"],
    "boolq": ["boolq/dev.jsonl"],
    "lambada_openai": ["lambada/lambada_test.jsonl"],
    "lambada_standard": ["lambada/lambada_test_plain_text.txt"],
}
