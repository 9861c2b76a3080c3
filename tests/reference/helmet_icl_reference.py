#!/usr/bin/env python3
"""Independent reference for HELMET's many-shot ICL prompts; writes tests/testdata/golden/helmet/icl_<dataset>.jsonl.

What it does. For trec_coarse, trec_fine, banking77, clinc150 and nlu it rebuilds the prompts HELMET's `load_icl`
(princeton-nlp/HELMET @4526dfbd, data.py:342-465) would build with run seed 42, for every input length of the shot
table (4K..128K), and records numbers, ids and SHA-256 hashes only (no dataset text) for the first five evaluation
items. The construction is re-derived from HELMET's documented behaviour (summarised in /tmp/helmet_facts.md, which
was checked against HELMET's published example prompts), written from scratch with only the standard library and
numpy:
  - test selection (data.py:414-418): only if the test split has more than 500 items, HF `Dataset.shuffle(seed=42)`
    (= numpy `default_rng(42).permutation(n)`) then balance_labels(test, 500, 42); otherwise all items in file order;
  - per test item (data.py:427-448): local_seed = (int(sha256(text).hexdigest(), 16) + 42) % 2**31;
    demos = balance_labels(train, shots, local_seed) (data.py:386-412: random.Random(seed), labels in order of first
    appearance, first draw of `num_rounds % n` indices, then batches without replacement, each round shuffled);
    label permutation = random.seed(local_seed); random.shuffle(list(range(num_labels)));
  - base-model prompt (data.py:420-423, no chat template): instruction + " \\n\\n" + demos "{text}\\nlabel: {perm[id]}"
    joined by "\\n\\n" + "\\n\\n" + test text + "\\nlabel:"; gold = str(perm[test id]).
Label ids are positions in the Hugging Face ClassLabel lists (facts §4); CLINC150 keeps `oos` (id 42, 151 labels).

NLU is OUR subset, not HELMET's file: train = nlu/kfold1_train_rows.csv (file order, used directly as the demo pool),
test = nlu/kfold1_test_rows.csv; label = scenario + "_" + intent mapped onto the 68-name HF list; HELMET's
train_test_split of the full 25,715-row dataset is NOT reproduced.

Golden lines: a header (golden_lines()), then one line per length {length, shots, items[0..4]} (item()). "Source
index" = 0-based position in the split as read here; label ids in counts are the HF ids (not permuted).

Rerun (from the repo root, ~10 s; data in --shared-data, default <repo>/../shared/data):
    /tmp/lmeval-venv/bin/python tests/reference/helmet_icl_reference.py          # writes the 5 goldens
    /tmp/lmeval-venv/bin/python tests/reference/helmet_icl_reference.py --check  # compares instead of writing
Self-checks (the test vectors of facts §6 and the published-example demos) run first and abort on a mismatch.
"""
import argparse
import csv
import hashlib
import json
import math
import os
import random
import sys
import time
from collections import Counter

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEED = 42
MAX_TEST = 500
N_ITEMS = 5
LENGTHS = (4096, 8192, 16384, 32768, 65536, 131072)
SHOTS = {
    "trec_coarse": (200, 400, 800, 1600, 3300, 6600),
    "trec_fine": (200, 400, 800, 1600, 3200, 6400),
    "banking77": (180, 360, 720, 1450, 2900, 5900),
    "clinc150": (220, 440, 880, 1750, 3525, 7050),
    "nlu": (250, 510, 1020, 2040, 4080, 8296),
}
INSTRUCTION = ('Use the provided mapping from the text to label to assign a label to the text. '
               'Only output "label: {label}" and nothing else. \n\n')

# Hugging Face ClassLabel orders (facts §4); id = position.
TREC_COARSE = "ABBR ENTY DESC HUM LOC NUM".split()
TREC_FINE = """
    ABBR:abb ABBR:exp ENTY:animal ENTY:body ENTY:color ENTY:cremat ENTY:currency ENTY:dismed ENTY:event
    ENTY:food ENTY:instru ENTY:lang ENTY:letter ENTY:other ENTY:plant ENTY:product ENTY:religion ENTY:sport
    ENTY:substance ENTY:symbol ENTY:techmeth ENTY:termeq ENTY:veh ENTY:word DESC:def DESC:desc DESC:manner
    DESC:reason HUM:gr HUM:ind HUM:title HUM:desc LOC:city LOC:country LOC:mount LOC:other LOC:state
    NUM:code NUM:count NUM:date NUM:dist NUM:money NUM:ord NUM:other NUM:period NUM:perc NUM:speed NUM:temp
    NUM:volsize NUM:weight""".split()
BANKING77 = """
    activate_my_card age_limit apple_pay_or_google_pay atm_support automatic_top_up
    balance_not_updated_after_bank_transfer balance_not_updated_after_cheque_or_cash_deposit
    beneficiary_not_allowed cancel_transfer card_about_to_expire card_acceptance card_arrival
    card_delivery_estimate card_linking card_not_working card_payment_fee_charged
    card_payment_not_recognised card_payment_wrong_exchange_rate card_swallowed cash_withdrawal_charge
    cash_withdrawal_not_recognised change_pin compromised_card contactless_not_working country_support
    declined_card_payment declined_cash_withdrawal declined_transfer direct_debit_payment_not_recognised
    disposable_card_limits edit_personal_details exchange_charge exchange_rate exchange_via_app
    extra_charge_on_statement failed_transfer fiat_currency_support get_disposable_virtual_card
    get_physical_card getting_spare_card getting_virtual_card lost_or_stolen_card lost_or_stolen_phone
    order_physical_card passcode_forgotten pending_card_payment pending_cash_withdrawal pending_top_up
    pending_transfer pin_blocked receiving_money Refund_not_showing_up request_refund reverted_card_payment?
    supported_cards_and_currencies terminate_account top_up_by_bank_transfer_charge top_up_by_card_charge
    top_up_by_cash_or_cheque top_up_failed top_up_limits top_up_reverted topping_up_by_card
    transaction_charged_twice transfer_fee_charged transfer_into_account transfer_not_received_by_recipient
    transfer_timing unable_to_verify_identity verify_my_identity verify_source_of_funds verify_top_up
    virtual_card_not_working visa_or_mastercard why_verify_identity wrong_amount_of_cash_received
    wrong_exchange_rate_for_cash_withdrawal""".split()
CLINC150 = """
    restaurant_reviews nutrition_info account_blocked oil_change_how time weather redeem_rewards
    interest_rate gas_type accept_reservations smart_home user_name report_lost_card repeat whisper_mode
    what_are_your_hobbies order jump_start schedule_meeting meeting_schedule freeze_account what_song
    meaning_of_life restaurant_reservation traffic make_call text bill_balance improve_credit_score
    change_language no measurement_conversion timer flip_coin do_you_have_pets balance tell_joke
    last_maintenance exchange_rate uber car_rental credit_limit oos shopping_list expiration_date routing
    meal_suggestion tire_change todo_list card_declined rewards_balance change_accent vaccines
    reminder_update food_last change_ai_name bill_due who_do_you_work_for share_location international_visa
    calendar translate carry_on book_flight insurance_change todo_list_update timezone cancel_reservation
    transactions credit_score report_fraud spending_history directions spelling insurance what_is_your_name
    reminder where_are_you_from distance payday flight_status find_phone greeting alarm order_status
    confirm_reservation cook_time damaged_card reset_settings pin_change replacement_card_duration new_card
    roll_dice income taxes date who_made_you pto_request tire_pressure how_old_are_you rollover_401k
    pto_request_status how_busy application_status recipe calendar_update play_music yes direct_deposit
    credit_limit_change gas pay_bill ingredients_list lost_luggage goodbye what_can_i_ask_you book_hotel
    are_you_a_bot next_song change_speed plug_type maybe w2 oil_change_when thank_you shopping_list_update
    pto_balance order_checks travel_alert fun_fact sync_device schedule_maintenance apr transfer
    ingredient_substitution calories current_location international_fees calculator definition next_holiday
    update_playlist mpg min_payment change_user_name restaurant_suggestion travel_notification cancel
    pto_used travel_suggestion change_volume""".split()
NLU = """
    alarm_query alarm_remove alarm_set audio_volume_down audio_volume_mute audio_volume_other
    audio_volume_up calendar_query calendar_remove calendar_set cooking_query cooking_recipe
    datetime_convert datetime_query email_addcontact email_query email_querycontact email_sendemail
    general_affirm general_commandstop general_confirm general_dontcare general_explain general_greet
    general_joke general_negate general_praise general_quirky general_repeat iot_cleaning iot_coffee
    iot_hue_lightchange iot_hue_lightdim iot_hue_lightoff iot_hue_lighton iot_hue_lightup iot_wemo_off
    iot_wemo_on lists_createoradd lists_query lists_remove music_dislikeness music_likeness music_query
    music_settings news_query play_audiobook play_game play_music play_podcasts play_radio qa_currency
    qa_definition qa_factoid qa_maths qa_stock recommendation_events recommendation_locations
    recommendation_movies social_post social_query takeaway_order takeaway_query transport_query
    transport_taxi transport_ticket transport_traffic weather_query""".split()


def sha256(s):
    return hashlib.sha256(s.encode("utf-8")).hexdigest()


def ids(names, rows):
    """rows: [(text, label name)] -> [(source index, text, label id)]; a name missing from `names` is an error."""
    pos = {n: i for i, n in enumerate(names)}
    return [(i, text, pos[name]) for i, (text, name) in enumerate(rows)]


# ---------------------------------------------------------------------------------------------- loaders
def load_trec(d, fine):
    def read(path):  # like the HF loader: bytes, 0xF0 -> space, strip, decode, "LABEL text"
        rows = []
        with open(path, "rb") as f:
            for row in f:
                label, _, text = row.replace(b"\xf0", b" ").strip().decode().partition(" ")
                rows.append((text, label if fine else label.split(":")[0]))
        return rows
    names = TREC_FINE if fine else TREC_COARSE
    return ids(names, read(os.path.join(d, "trec", "train_5500.label"))), \
        ids(names, read(os.path.join(d, "trec", "TREC_10.label"))), len(names)


def load_banking77(d):
    def read(path):
        with open(path, encoding="utf-8", newline="") as f:
            r = csv.reader(f, quotechar='"', skipinitialspace=True)
            next(r)  # header: text,category
            return [(row[0], row[1]) for row in r]
    return ids(BANKING77, read(os.path.join(d, "banking77", "train.csv"))), \
        ids(BANKING77, read(os.path.join(d, "banking77", "test.csv"))), len(BANKING77)


def load_clinc150(d):
    with open(os.path.join(d, "clinc150", "data_oos_plus.json"), encoding="utf-8") as f:
        j = json.load(f)
    return ids(CLINC150, j["train"] + j["oos_train"]), ids(CLINC150, j["val"] + j["oos_val"]), len(CLINC150)


def load_nlu(d):  # our k-fold subset: id;scenario;intent;annotation;text;original (no header)
    def read(path):
        with open(path, encoding="utf-8", newline="") as f:
            rows = list(csv.reader(f, delimiter=";", quotechar='"'))
        assert all(len(r) == 6 for r in rows), path
        return [(r[4], r[1] + "_" + r[2]) for r in rows]
    return ids(NLU, read(os.path.join(d, "nlu", "kfold1_train_rows.csv"))), \
        ids(NLU, read(os.path.join(d, "nlu", "kfold1_test_rows.csv"))), len(NLU)


LOADERS = {
    "trec_coarse": lambda d: load_trec(d, False),
    "trec_fine": lambda d: load_trec(d, True),
    "banking77": load_banking77,
    "clinc150": load_clinc150,
    "nlu": load_nlu,
}


# ---------------------------------------------------------------------------------------------- HELMET construction
def balance_labels(items, shots, seed):
    """Items are (source index, text, label id); label groups in order of first appearance."""
    rand = random.Random(seed)
    groups = {}
    for it in items:
        groups.setdefault(it[2], []).append(it)
    num_rounds = math.ceil(shots / len(groups))
    rounds = [[] for _ in range(num_rounds)]
    for samples in groups.values():
        n = len(samples)
        picks = rand.sample(range(n), num_rounds % n)  # HELMET's quirk: modulo, not min
        while len(picks) < num_rounds:
            picks += rand.sample(range(n), min(num_rounds - len(picks), n))
        for r, k in enumerate(picks):
            rounds[r].append(samples[k])
    for r in rounds:
        rand.shuffle(r)
    return [it for r in rounds for it in r][:shots]


def select_test(test):
    if len(test) <= MAX_TEST:
        return list(test)
    shuffled = [test[i] for i in np.random.default_rng(SEED).permutation(len(test))]
    return balance_labels(shuffled, MAX_TEST, SEED)


def local_seed(text):
    return (int(sha256(text), 16) + SEED) % 2**31


def label_perm(seed, num_labels):
    perm = list(range(num_labels))
    random.Random(seed).shuffle(perm)  # same state as random.seed(seed); random.shuffle(perm)
    return perm


def build(train, test_item, shots, num_labels):
    """Returns (local seed, demos, permutation, prompt, gold) for one test item."""
    seed = local_seed(test_item[1])
    demos = balance_labels(train, shots, seed)
    perm = label_perm(seed, num_labels)
    context = "\n\n".join(f"{text}\nlabel: {perm[lab]}" for _, text, lab in demos)
    prompt = INSTRUCTION + context + "\n\n" + test_item[1] + "\nlabel:"
    return seed, demos, perm, prompt, str(perm[test_item[2]])


def joined_sha(xs):
    return sha256(",".join(str(x) for x in xs))


def item(i, train, test_item, shots, num_labels):
    seed, demos, perm, prompt, gold = build(train, test_item, shots, num_labels)
    src = [d[0] for d in demos]
    counts = Counter(d[2] for d in demos)
    return {"i": i, "source_index": test_item[0], "local_seed": seed, "gold": gold,
            "label_perm_sha256": joined_sha(perm), "demo_source_indices_sha256": joined_sha(src),
            "demo_first": src[:5], "demo_last": src[-3:],
            "demo_label_counts_sha256": sha256(json.dumps(sorted([k, v] for k, v in counts.items()),
                                                          separators=(",", ":"))),
            "prompt_chars": len(prompt), "prompt_sha256": sha256(prompt)}


def golden_lines(name, train, test, num_labels):
    sel = select_test(test)
    counts = Counter(it[2] for it in sel)
    header = {"dataset": name, "seed": SEED, "num_labels": num_labels, "train_size": len(train),
              "test_size_raw": len(test), "test_count": len(sel),
              "test_source_indices_sha256": joined_sha(it[0] for it in sel),
              "test_source_indices_first": [it[0] for it in sel[:10]],
              "test_label_counts": {str(k): counts[k] for k in sorted(counts)}}
    lines = [header]
    for length, shots in zip(LENGTHS, SHOTS[name]):
        lines.append({"length": length, "shots": shots,
                      "items": [item(i, train, sel[i], shots, num_labels) for i in range(N_ITEMS)]})
    return "".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines)


# ---------------------------------------------------------------------------------------------- self-checks
class H(str):
    """A data text named by the first 16 hex digits of its SHA-256 (no data text in this file)."""


def th(x):
    """Texts replaced by their hash prefix, recursively, for comparison with H values."""
    if isinstance(x, str):
        return H(hashlib.sha256(x.encode("utf-8")).hexdigest()[:16])
    if isinstance(x, (list, tuple)):
        return type(x)(th(v) for v in x)
    return x


def self_check(data):
    """Test vectors of /tmp/helmet_facts.md §6 and the demos of HELMET's published examples (8K lengths);
    data texts appear as H(sha256 prefix)."""
    s = local_seed(data["trec_coarse"][1][0][1])  # TREC's first test item
    assert s == 596078644, s
    assert label_perm(s, 6) == [5, 4, 2, 0, 1, 3]
    assert label_perm(s, 50)[:12] == [41, 2, 49, 27, 46, 42, 34, 26, 12, 43, 9, 3]
    assert random.Random(s).sample(range(100), 5) == [56, 22, 12, 65, 62]
    s = local_seed(select_test(data["banking77"][1])[0][1])  # BANKING77's first selected item
    assert s == 917805389, s
    assert label_perm(s, 77)[:12] == [72, 70, 51, 22, 9, 28, 55, 14, 71, 57, 19, 37]
    for n, want in ((3080, [2526, 1853, 2749, 3008, 1677, 2585, 1959, 2793, 859, 514]),
                    (3100, [2204, 2217, 2644, 2934, 1781, 158, 2631, 2353, 803, 1077]),
                    (25715, [12594, 17666, 22041, 22989, 21989, 12121, 23919, 23795, 19243, 5391])):
        assert list(np.random.default_rng(42).permutation(n)[:10]) == want, n

    def demos_of(name, shots):
        train, test, num_labels = data[name]
        t0 = select_test(test)[0]
        _, demos, perm, _, _ = build(train, t0, shots, num_labels)
        return t0, [(text, perm[lab]) for _, text, lab in demos]

    t0, d = demos_of("trec_coarse", 400)
    assert th(t0[1]) == H("e40035b9beb5d276") and t0[0] == 0
    assert th(d[:6]) == [(H("d09f7f39abdd0faa"), 3), (H("fd6497cbc95c89e6"), 2),
                     (H("bd4e25c1005e462e"), 5), (H("cf9c609143729f68"), 1),
                     (H("4636f447f1f768df"), 4),
                     (H("d340609178dfd8d6"), 0)], d[:6]
    assert len(d) == 400 and th(d[-1]) == (H("e7de93a7fd5ec8ca"), 1), d[-1]
    _, d = demos_of("trec_fine", 400)
    assert [x[1] for x in d[:4]] == [5, 29, 24, 12] and [x[1] for x in d[397:399]] == [2, 49]
    assert th(d[-1]) == (H("bf618896c713ea4f"), 19), d[-1]
    t0, d = demos_of("banking77", 360)
    assert [x[1] for x in d[:2]] == [11, 22] and th(d[-1]) == (H("50919a25b9da2dfd"), 73), d[-1]
    assert th([it[1] for it in select_test(data["banking77"][1])[:3]]) == [
        H("076bb01d208c35e6"), H("0c2e9f6deb522653"),
        H("c57b1f7fccc041be")]
    _, d = demos_of("clinc150", 440)
    assert [x[1] for x in d[:5]] == [95, 65, 127, 38, 43], [x[1] for x in d[:5]]
    assert th([it[1] for it in select_test(data["clinc150"][1])[:3]]) == [
        H("11b6a7bf9e49f03d"), H("aabda32828a7dbc4"),
        H("03b4fec4279fb430")]
    for name, sizes in (("trec_coarse", (5452, 500)), ("banking77", (10003, 3080)), ("clinc150", (15250, 3100))):
        assert (len(data[name][0]), len(data[name][1])) == sizes, name
    print("self-checks passed (facts §6 vectors, published TREC/BANKING77/CLINC150 8K demos)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared-data", default=os.path.join(REPO, "..", "shared", "data"))
    ap.add_argument("--out", default=os.path.join(REPO, "tests", "testdata", "golden", "helmet"))
    ap.add_argument("--check", action="store_true", help="compare with the existing goldens instead of writing")
    args = ap.parse_args()
    start = time.perf_counter()
    d = os.path.join(args.shared_data, "helmet")
    data = {name: load(d) for name, load in LOADERS.items()}
    self_check(data)
    os.makedirs(args.out, exist_ok=True)
    bad = 0
    for name, (train, test, num_labels) in data.items():
        text = golden_lines(name, train, test, num_labels)
        path = os.path.join(args.out, f"icl_{name}.jsonl")
        if args.check:
            with open(path, encoding="utf-8") as f:
                same = f.read() == text
            bad += not same
            print(f"{path}: {'OK' if same else 'DIFFERS'}")
        else:
            with open(path, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
            print(f"wrote {path}")
    print(f"done in {time.perf_counter() - start:.1f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
