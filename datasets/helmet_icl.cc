// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <array>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/json.h"
#include "base/np_random.h"
#include "base/py_random.h"
#include "base/sha256.h"
#include "base/status_macros.h"
#include "datasets/generator.h"
#include "datasets/helmet.h"
#include "datasets/helmet_internal.h"
#include "datasets/long_context.h"
#include "datasets/reader_util.h"

namespace focal::datasets {
namespace {

// The Hugging Face ClassLabel names of the datasets HELMET loads, in id order
// (dataset facts): CogComp/trec v2 coarse_label and fine_label,
// PolyAI/banking77 label, clinc_oos "plus" intent, and
// nlu_evaluation_data label.
// 6 names.
constexpr char kTrecCoarse[] = "ABBR ENTY DESC HUM LOC NUM";
// 50 names.
constexpr char kTrecFine[] =
    "ABBR:abb ABBR:exp ENTY:animal ENTY:body ENTY:color ENTY:cremat ENTY:currency ENTY:dismed "
    "ENTY:event ENTY:food ENTY:instru ENTY:lang ENTY:letter ENTY:other ENTY:plant "
    "ENTY:product ENTY:religion ENTY:sport ENTY:substance ENTY:symbol ENTY:techmeth "
    "ENTY:termeq ENTY:veh ENTY:word DESC:def DESC:desc DESC:manner DESC:reason HUM:gr HUM:ind "
    "HUM:title HUM:desc LOC:city LOC:country LOC:mount LOC:other LOC:state NUM:code NUM:count "
    "NUM:date NUM:dist NUM:money NUM:ord NUM:other NUM:period NUM:perc NUM:speed NUM:temp "
    "NUM:volsize NUM:weight";
// 77 names.
constexpr char kBanking77[] =
    "activate_my_card age_limit apple_pay_or_google_pay atm_support automatic_top_up "
    "balance_not_updated_after_bank_transfer balance_not_updated_after_cheque_or_cash_deposit "
    "beneficiary_not_allowed cancel_transfer card_about_to_expire card_acceptance "
    "card_arrival card_delivery_estimate card_linking card_not_working "
    "card_payment_fee_charged card_payment_not_recognised card_payment_wrong_exchange_rate "
    "card_swallowed cash_withdrawal_charge cash_withdrawal_not_recognised change_pin "
    "compromised_card contactless_not_working country_support declined_card_payment "
    "declined_cash_withdrawal declined_transfer direct_debit_payment_not_recognised "
    "disposable_card_limits edit_personal_details exchange_charge exchange_rate "
    "exchange_via_app extra_charge_on_statement failed_transfer fiat_currency_support "
    "get_disposable_virtual_card get_physical_card getting_spare_card getting_virtual_card "
    "lost_or_stolen_card lost_or_stolen_phone order_physical_card passcode_forgotten "
    "pending_card_payment pending_cash_withdrawal pending_top_up pending_transfer pin_blocked "
    "receiving_money Refund_not_showing_up request_refund reverted_card_payment? "
    "supported_cards_and_currencies terminate_account top_up_by_bank_transfer_charge "
    "top_up_by_card_charge top_up_by_cash_or_cheque top_up_failed top_up_limits "
    "top_up_reverted topping_up_by_card transaction_charged_twice transfer_fee_charged "
    "transfer_into_account transfer_not_received_by_recipient transfer_timing "
    "unable_to_verify_identity verify_my_identity verify_source_of_funds verify_top_up "
    "virtual_card_not_working visa_or_mastercard why_verify_identity "
    "wrong_amount_of_cash_received wrong_exchange_rate_for_cash_withdrawal";
// 151 names.
constexpr char kClinc150[] =
    "restaurant_reviews nutrition_info account_blocked oil_change_how time weather "
    "redeem_rewards interest_rate gas_type accept_reservations smart_home user_name "
    "report_lost_card repeat whisper_mode what_are_your_hobbies order jump_start "
    "schedule_meeting meeting_schedule freeze_account what_song meaning_of_life "
    "restaurant_reservation traffic make_call text bill_balance improve_credit_score "
    "change_language no measurement_conversion timer flip_coin do_you_have_pets balance "
    "tell_joke last_maintenance exchange_rate uber car_rental credit_limit oos shopping_list "
    "expiration_date routing meal_suggestion tire_change todo_list card_declined "
    "rewards_balance change_accent vaccines reminder_update food_last change_ai_name bill_due "
    "who_do_you_work_for share_location international_visa calendar translate carry_on "
    "book_flight insurance_change todo_list_update timezone cancel_reservation transactions "
    "credit_score report_fraud spending_history directions spelling insurance "
    "what_is_your_name reminder where_are_you_from distance payday flight_status find_phone "
    "greeting alarm order_status confirm_reservation cook_time damaged_card reset_settings "
    "pin_change replacement_card_duration new_card roll_dice income taxes date who_made_you "
    "pto_request tire_pressure how_old_are_you rollover_401k pto_request_status how_busy "
    "application_status recipe calendar_update play_music yes direct_deposit "
    "credit_limit_change gas pay_bill ingredients_list lost_luggage goodbye "
    "what_can_i_ask_you book_hotel are_you_a_bot next_song change_speed plug_type maybe w2 "
    "oil_change_when thank_you shopping_list_update pto_balance order_checks travel_alert "
    "fun_fact sync_device schedule_maintenance apr transfer ingredient_substitution calories "
    "current_location international_fees calculator definition next_holiday update_playlist "
    "mpg min_payment change_user_name restaurant_suggestion travel_notification cancel "
    "pto_used travel_suggestion change_volume";
// 68 names.
constexpr char kNlu[] =
    "alarm_query alarm_remove alarm_set audio_volume_down audio_volume_mute "
    "audio_volume_other audio_volume_up calendar_query calendar_remove calendar_set "
    "cooking_query cooking_recipe datetime_convert datetime_query email_addcontact "
    "email_query email_querycontact email_sendemail general_affirm general_commandstop "
    "general_confirm general_dontcare general_explain general_greet general_joke "
    "general_negate general_praise general_quirky general_repeat iot_cleaning iot_coffee "
    "iot_hue_lightchange iot_hue_lightdim iot_hue_lightoff iot_hue_lighton iot_hue_lightup "
    "iot_wemo_off iot_wemo_on lists_createoradd lists_query lists_remove music_dislikeness "
    "music_likeness music_query music_settings news_query play_audiobook play_game play_music "
    "play_podcasts play_radio qa_currency qa_definition qa_factoid qa_maths qa_stock "
    "recommendation_events recommendation_locations recommendation_movies social_post "
    "social_query takeaway_order takeaway_query transport_query transport_taxi "
    "transport_ticket transport_traffic weather_query";

struct IclSpec {
  const char* name;
  const char* labels;
  std::array<int64_t, 6> shots;  // 4K, 8K, 16K, 32K, 64K, 128K (HELMET's configs)
};
constexpr std::array<int64_t, 6> kIclLengths = {4096, 8192, 16384, 32768, 65536, 131072};
constexpr IclSpec kIcl[] = {
    {"trec_coarse", kTrecCoarse, {200, 400, 800, 1600, 3300, 6600}},
    {"trec_fine", kTrecFine, {200, 400, 800, 1600, 3200, 6400}},
    {"banking77", kBanking77, {180, 360, 720, 1450, 2900, 5900}},
    {"clinc150", kClinc150, {220, 440, 880, 1750, 3525, 7050}},
    {"nlu", kNlu, {250, 510, 1020, 2040, 4080, 8296}},
};

const IclSpec* FindIcl(absl::string_view name) {
  for (const IclSpec& s : kIcl) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

absl::Status UnknownDataset(absl::string_view name) {
  std::vector<std::string> names = HelmetIclDatasets();
  return absl::InvalidArgumentError(absl::StrCat("unknown HELMET ICL dataset '", name,
                                                 "' (known: ", absl::StrJoin(names, ", "), ")"));
}

// (text, label name) rows -> items with HF ids.
absl::StatusOr<std::vector<IclItem>> WithIds(const std::vector<std::string>& labels,
                                             std::vector<std::pair<std::string, std::string>> rows,
                                             absl::string_view path,
                                             const std::vector<int64_t>& line_numbers) {
  std::vector<IclItem> out;
  out.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    auto it = std::find(labels.begin(), labels.end(), rows[i].second);
    if (it == labels.end()) {
      return LineError(path, line_numbers[i],
                       absl::StrCat("label '", rows[i].second, "' is not one of the dataset's ",
                                    labels.size(), " labels"));
    }
    out.push_back({static_cast<int64_t>(i), std::move(rows[i].first),
                   static_cast<int32_t>(it - labels.begin())});
  }
  return out;
}

// TREC as the HF loader reads it: bytes, 0xF0 -> space, strip, UTF-8 decode,
// "LABEL text" split at the first space; coarse = the part before ':'.
absl::StatusOr<std::vector<IclItem>> ReadTrec(const std::string& path, bool fine,
                                              const std::vector<std::string>& labels) {
  std::string raw;
  FOCAL_ASSIGN_OR_RETURN(std::vector<Line> lines, ReadLines(path, &raw));
  std::vector<std::pair<std::string, std::string>> rows;
  std::vector<int64_t> numbers;
  for (const Line& line : lines) {
    std::string row(line.text);
    std::replace(row.begin(), row.end(), '\xf0', ' ');
    absl::string_view s = absl::StripAsciiWhitespace(row);
    if (!IsValidUtf8(s)) return LineError(path, line.number, "not UTF-8");
    const size_t sp = s.find(' ');
    if (sp == absl::string_view::npos) return LineError(path, line.number, "no 'LABEL text'");
    const absl::string_view label = s.substr(0, sp);
    rows.emplace_back(std::string(s.substr(sp + 1)),
                      std::string(fine ? label : label.substr(0, label.find(':'))));
    numbers.push_back(line.number);
  }
  return WithIds(labels, std::move(rows), path, numbers);
}

// CSV rows (text column, label column(s)) as Python's csv module reads them.
absl::StatusOr<std::vector<IclItem>> ReadCsvItems(const std::string& path, char delimiter,
                                                  bool skip_initial_space, bool header,
                                                  size_t num_fields, bool nlu,
                                                  const std::vector<std::string>& labels) {
  FOCAL_ASSIGN_OR_RETURN(std::string raw, ReadDataFile(path));
  FOCAL_ASSIGN_OR_RETURN(std::vector<CsvRow> table,
                         ParseCsv(raw, path, delimiter, skip_initial_space));
  std::vector<std::pair<std::string, std::string>> rows;
  std::vector<int64_t> numbers;
  for (size_t r = header ? 1 : 0; r < table.size(); ++r) {
    const CsvRow& row = table[r];
    if (row.fields.size() != num_fields) {
      return LineError(path, row.line,
                       absl::StrCat("expected ", num_fields, " fields, found ", row.fields.size()));
    }
    if (nlu) {  // id;scenario;intent;annotation;text;original
      rows.emplace_back(row.fields[4], absl::StrCat(row.fields[1], "_", row.fields[2]));
    } else {  // text,category
      rows.emplace_back(row.fields[0], row.fields[1]);
    }
    numbers.push_back(row.line);
  }
  return WithIds(labels, std::move(rows), path, numbers);
}

// CLINC150 "plus": {"train": [[text, intent], ...], "oos_train": ..., "val", "oos_val", ...}.
absl::StatusOr<std::vector<IclItem>> ReadClincSplit(const JsonValue& root, const std::string& path,
                                                    const char* split,
                                                    const std::vector<std::string>& labels) {
  std::vector<std::pair<std::string, std::string>> rows;
  std::vector<int64_t> numbers;  // no lines in one JSON document: the item number
  for (const std::string& key : {std::string(split), absl::StrCat("oos_", split)}) {
    const JsonValue* arr = root.Find(key);
    if (arr == nullptr || !arr->is_array()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": missing list '", key, "'"));
    }
    for (size_t i = 0; i < arr->array().size(); ++i) {
      const JsonValue& e = arr->array()[i];
      if (!e.is_array() || e.array().size() != 2 || !e.array()[0].is_string() ||
          !e.array()[1].is_string()) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": ", key, "[", i, "] is not a [text, intent] pair"));
      }
      rows.emplace_back(e.array()[0].string_value(), e.array()[1].string_value());
      numbers.push_back(static_cast<int64_t>(i));
    }
  }
  auto items = WithIds(labels, std::move(rows), absl::StrCat(path, " (", split, ")"), numbers);
  return items;
}

}  // namespace

std::vector<std::string> HelmetIclDatasets() {
  std::vector<std::string> out;
  for (const IclSpec& s : kIcl) out.push_back(s.name);
  return out;
}

absl::StatusOr<std::map<std::string, std::string>> HelmetIclFiles(absl::string_view dataset) {
  if (dataset == "trec_coarse" || dataset == "trec_fine") {
    return std::map<std::string, std::string>{{"train", "helmet/trec/train_5500.label"},
                                              {"test", "helmet/trec/TREC_10.label"}};
  }
  if (dataset == "banking77") {
    return std::map<std::string, std::string>{{"train", "helmet/banking77/train.csv"},
                                              {"test", "helmet/banking77/test.csv"}};
  }
  if (dataset == "clinc150") {
    return std::map<std::string, std::string>{{"data", "helmet/clinc150/data_oos_plus.json"}};
  }
  if (dataset == "nlu") {
    return std::map<std::string, std::string>{{"train", "helmet/nlu/kfold1_train_rows.csv"},
                                              {"test", "helmet/nlu/kfold1_test_rows.csv"}};
  }
  return UnknownDataset(dataset);
}

absl::StatusOr<IclDataset> LoadIclDataset(absl::string_view dataset,
                                          const std::map<std::string, std::string>& files) {
  const IclSpec* spec = FindIcl(dataset);
  if (spec == nullptr) return UnknownDataset(dataset);
  FOCAL_ASSIGN_OR_RETURN(auto roles, HelmetIclFiles(dataset));
  for (const auto& [role, rel] : roles) {
    if (files.count(role) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("HELMET ", dataset, " needs its data file '", rel,
                       "': pass --data-dir (a directory with the ../shared/data layout)"));
    }
  }
  IclDataset d;
  d.name = std::string(dataset);
  d.labels = absl::StrSplit(spec->labels, ' ');
  if (dataset == "trec_coarse" || dataset == "trec_fine") {
    const bool fine = dataset == "trec_fine";
    FOCAL_ASSIGN_OR_RETURN(d.train, ReadTrec(files.at("train"), fine, d.labels));
    FOCAL_ASSIGN_OR_RETURN(d.test, ReadTrec(files.at("test"), fine, d.labels));
  } else if (dataset == "banking77") {
    FOCAL_ASSIGN_OR_RETURN(d.train,
                           ReadCsvItems(files.at("train"), ',', true, true, 2, false, d.labels));
    FOCAL_ASSIGN_OR_RETURN(d.test,
                           ReadCsvItems(files.at("test"), ',', true, true, 2, false, d.labels));
  } else if (dataset == "nlu") {
    FOCAL_ASSIGN_OR_RETURN(d.train,
                           ReadCsvItems(files.at("train"), ';', false, false, 6, true, d.labels));
    FOCAL_ASSIGN_OR_RETURN(d.test,
                           ReadCsvItems(files.at("test"), ';', false, false, 6, true, d.labels));
  } else {  // clinc150
    const std::string& path = files.at("data");
    FOCAL_ASSIGN_OR_RETURN(std::string raw, ReadDataFile(path));
    FOCAL_ASSIGN_OR_RETURN(JsonValue root, ParseJson(raw, path));
    FOCAL_ASSIGN_OR_RETURN(d.train, ReadClincSplit(root, path, "train", d.labels));
    FOCAL_ASSIGN_OR_RETURN(d.test, ReadClincSplit(root, path, "val", d.labels));
  }
  if (d.train.empty() || d.test.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("HELMET ", dataset, ": empty split"));
  }
  return d;
}

std::vector<IclItem> BalanceLabels(absl::Span<const IclItem> items, int64_t shots, uint64_t seed) {
  PyRandom rand(seed);
  std::vector<int32_t> order;  // labels by first appearance
  std::map<int32_t, std::vector<const IclItem*>> groups;
  for (const IclItem& it : items) {
    auto& g = groups[it.label];
    if (g.empty()) order.push_back(it.label);
    g.push_back(&it);
  }
  if (order.empty() || shots <= 0) return {};
  const int64_t num_labels = static_cast<int64_t>(order.size());
  const int64_t rounds = (shots + num_labels - 1) / num_labels;
  std::vector<std::vector<const IclItem*>> by_round(static_cast<size_t>(rounds));
  for (int32_t label : order) {
    const std::vector<const IclItem*>& samples = groups[label];
    const int64_t n = static_cast<int64_t>(samples.size());
    std::vector<int64_t> picks = rand.Sample(n, rounds % n);  // HELMET: modulo, not min
    while (static_cast<int64_t>(picks.size()) < rounds) {
      const std::vector<int64_t> more =
          rand.Sample(n, std::min<int64_t>(rounds - static_cast<int64_t>(picks.size()), n));
      picks.insert(picks.end(), more.begin(), more.end());
    }
    for (int64_t r = 0; r < rounds; ++r) by_round[r].push_back(samples[picks[r]]);
  }
  std::vector<IclItem> out;
  out.reserve(static_cast<size_t>(rounds * num_labels));
  for (std::vector<const IclItem*>& round : by_round) {
    for (int64_t i = static_cast<int64_t>(round.size()) - 1; i > 0; --i) {  // random.shuffle
      std::swap(round[i], round[rand.RandBelow(i + 1)]);
    }
    for (const IclItem* it : round) {
      if (static_cast<int64_t>(out.size()) == shots) break;
      out.push_back(*it);
    }
  }
  return out;
}

std::vector<IclItem> SelectIclTest(absl::Span<const IclItem> test, uint64_t seed,
                                   int64_t max_items) {
  if (static_cast<int64_t>(test.size()) <= max_items) return {test.begin(), test.end()};
  std::vector<IclItem> shuffled;
  shuffled.reserve(test.size());
  for (int64_t i : NumpyPermutation(seed, static_cast<int64_t>(test.size()))) {
    shuffled.push_back(test[i]);
  }
  return BalanceLabels(shuffled, max_items, seed);
}

uint32_t HelmetItemSeed(absl::string_view text, uint64_t seed) {
  Sha256 h;
  h.Update(text);
  const std::array<uint8_t, 32> d = h.Finish();
  // int(hexdigest, 16) mod 2^31 is the digest's last 31 bits (2^31 divides 2^256).
  const uint64_t low =
      (uint64_t{d[28]} << 24) | (uint64_t{d[29]} << 16) | (uint64_t{d[30]} << 8) | uint64_t{d[31]};
  return static_cast<uint32_t>(((low & 0x7FFFFFFFu) + (seed & 0x7FFFFFFFu)) & 0x7FFFFFFFu);
}

std::vector<int32_t> HelmetLabelPermutation(uint32_t seed, int32_t n) {
  std::vector<int32_t> perm(static_cast<size_t>(std::max(n, 0)));
  for (int32_t i = 0; i < n; ++i) perm[i] = i;
  PyRandom rand(seed);
  for (int64_t i = n - 1; i > 0; --i) std::swap(perm[i], perm[rand.RandBelow(i + 1)]);
  return perm;
}

int64_t HelmetIclShots(absl::string_view dataset, int64_t length) {
  const IclSpec* spec = FindIcl(dataset);
  if (spec == nullptr) return 0;
  for (size_t i = 0; i < kIclLengths.size(); ++i) {
    if (length <= kIclLengths[i]) return spec->shots[i];
  }
  return spec->shots.back();
}

IclPrompt BuildIclPrompt(const IclDataset& data, const IclItem& test_item, int64_t shots,
                         uint64_t seed, bool natural_label) {
  IclPrompt p;
  p.item_seed = HelmetItemSeed(test_item.text, seed);
  const std::vector<IclItem> demos = BalanceLabels(data.train, shots, p.item_seed);
  const std::vector<int32_t> perm =
      HelmetLabelPermutation(p.item_seed, static_cast<int32_t>(data.labels.size()));
  p.instruction =
      "Use the provided mapping from the text to label to assign a label to the text. Only "
      "output \"label: {label}\" and nothing else. \n\n";
  auto label = [&](int32_t id) { return natural_label ? data.labels[id] : absl::StrCat(perm[id]); };
  for (size_t i = 0; i < demos.size(); ++i) {
    absl::StrAppend(&p.context, i == 0 ? "" : "\n\n", demos[i].text,
                    "\nlabel: ", label(demos[i].label));
    p.demo_sources.push_back(demos[i].source_index);
  }
  p.question = absl::StrCat("\n\n", test_item.text, "\nlabel:");
  p.gold = label(test_item.label);
  return p;
}

absl::StatusOr<std::string> FitHelmetPrompt(const std::string& instruction, std::string context,
                                            const std::string& question, int64_t budget,
                                            const GeneratorOptions& settings,
                                            std::map<std::string, std::string>& meta) {
  FOCAL_ASSIGN_OR_RETURN(int64_t n, settings.count_tokens(instruction + context + question));
  int64_t cut = 0, rounds = 0;
  while (n > budget) {
    if (context.empty()) {
      return absl::OutOfRangeError(absl::StrCat("the prompt without its context is ", n,
                                                " tokens, over the budget of ", budget));
    }
    if (!settings.token_prefix) return absl::InternalError("no token_prefix for HELMET");
    FOCAL_ASSIGN_OR_RETURN(context, settings.token_prefix(context, -(n - budget)));
    cut += n - budget;
    ++rounds;
    FOCAL_ASSIGN_OR_RETURN(n, settings.count_tokens(instruction + context + question));
  }
  meta["prompt_tokens"] = absl::StrCat(n);
  meta["truncated_tokens"] = absl::StrCat(cut);
  meta["truncation_rounds"] = absl::StrCat(rounds);
  return instruction + context + question;
}

namespace {

absl::StatusOr<std::vector<GenerationSample>> MakeIclSamples(const GeneratorRequest& req) {
  auto it = req.options.find("dataset");
  if (it == req.options.end()) {
    return absl::InvalidArgumentError("helmet_icl: the spec names no generator_options dataset");
  }
  const std::string& name = it->second;
  bool natural_label = false;
  if (auto nl = req.options.find("natural_label"); nl != req.options.end()) {
    if (nl->second != "true" && nl->second != "false") {
      return absl::InvalidArgumentError(absl::StrCat(
          "helmet_icl: generator option natural_label is '", nl->second, "', not true or false"));
    }
    natural_label = nl->second == "true";
  }
  if (req.settings.num_samples <= 0) {
    return absl::InvalidArgumentError("helmet_icl: the sample count must be positive");
  }
  FOCAL_ASSIGN_OR_RETURN(IclDataset data, LoadIclDataset(name, req.files));
  const std::vector<IclItem> test = SelectIclTest(data.test, req.settings.seed);
  const int64_t shots = HelmetIclShots(name, req.length);
  const int64_t budget = req.length - kHelmetIclMaxNewTokens;
  const int64_t n = std::min<int64_t>(req.settings.num_samples, static_cast<int64_t>(test.size()));
  std::vector<GenerationSample> out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const IclPrompt p = BuildIclPrompt(data, test[i], shots, req.settings.seed, natural_label);
    GenerationSample s;
    s.task = req.task;
    s.length = req.length;
    s.index = i;
    s.meta["dataset"] = name;
    s.meta["source_index"] = absl::StrCat(test[i].source_index);
    s.meta["item_seed"] = absl::StrCat(p.item_seed);
    s.meta["shots"] = absl::StrCat(shots);
    auto input =
        FitHelmetPrompt(p.instruction, p.context, p.question, budget, req.settings, s.meta);
    if (!input.ok()) return Annotate(input.status(), absl::StrCat(req.task, " sample ", i));
    s.input = *std::move(input);
    s.outputs = {p.gold};
    s.max_new_tokens = kHelmetIclMaxNewTokens;
    // HELMET lets the model run its 20 tokens (its configs' stop_new_line
    // never reaches the generation code) and scores the first line after
    // "label:": stopping at the newline scores the same and saves the rest.
    s.stop = {"\n"};
    out.push_back(std::move(s));
  }
  return out;
}

FOCAL_REGISTER_GENERATOR(helmet_icl, {.id = "helmet_icl", .make = MakeIclSamples});

}  // namespace

}  // namespace focal::datasets
