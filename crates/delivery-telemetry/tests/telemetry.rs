//! Behaviour of the telemetry events, sinks and delivery tokens.

use std::collections::BTreeMap;
use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use delivery_telemetry::{
    DeliveredAt, DeliveryEvent, DeliveryPoint, DeliveryTelemetry, DiscardReason, FanOutSink,
    FastWait, InitialWait, JsonLinesSink, Phase, RecallEvent, RecordingSink, Strategy,
    TelemetryError, TelemetryEvent, TelemetrySink, TracingSink, duration_ms, emit_recall,
    read_json_lines,
};

fn recall_event() -> RecallEvent {
    RecallEvent {
        query_length: 42,
        docs_scanned: 25,
        docs_selected: 3,
        docs_trimmed: 0,
        strategy: Strategy::Model,
        duration_ms: 812.5,
        scan_duration_ms: 4.25,
        fast_duration_ms: Some(6.5),
        selector_duration_ms: Some(801.0),
    }
}

fn fast_event() -> DeliveryEvent {
    DeliveryEvent {
        phase: Phase::Fast,
        delivery_point: DeliveryPoint::Initial,
        discard_reason: None,
        strategy: Strategy::Heuristic,
        docs_selected: 2,
        latency_ms: 100.0,
        initial_wait: Some(InitialWait::Fast),
    }
}

fn discarded_event() -> DeliveryEvent {
    DeliveryEvent {
        phase: Phase::Refined,
        delivery_point: DeliveryPoint::Discarded,
        discard_reason: Some(DiscardReason::NoSafeDeliveryPoint),
        strategy: Strategy::Model,
        docs_selected: 4,
        latency_ms: 1500.75,
        initial_wait: None,
    }
}

fn tokens() -> (
    Arc<RecordingSink>,
    delivery_telemetry::FastDelivery,
    delivery_telemetry::TerminalDelivery,
) {
    let sink = Arc::new(RecordingSink::new());
    let (fast, terminal) = DeliveryTelemetry::new(sink.clone());
    (sink, fast, terminal)
}

// ---- JSON shape -------------------------------------------------------------------------------

#[test]
fn recall_event_serializes_with_spec_fields_under_its_name() {
    insta::assert_json_snapshot!(TelemetryEvent::Recall(recall_event()));
}

#[test]
fn recall_event_without_fast_result_or_selector_serializes_nulls() {
    let event = RecallEvent {
        query_length: 7,
        docs_scanned: 0,
        docs_selected: 0,
        docs_trimmed: 0,
        strategy: Strategy::None,
        duration_ms: 1.0,
        scan_duration_ms: 0.5,
        fast_duration_ms: None,
        selector_duration_ms: None,
    };
    insta::assert_json_snapshot!(TelemetryEvent::Recall(event));
}

#[test]
fn fast_delivery_event_serializes_with_null_discard_reason() {
    insta::assert_json_snapshot!(TelemetryEvent::Delivery(fast_event()));
}

#[test]
fn discarded_delivery_event_serializes_with_snake_case_reason() {
    insta::assert_json_snapshot!(TelemetryEvent::Delivery(discarded_event()));
}

#[test]
fn enum_wire_names_are_snake_case_and_match_as_str() {
    let reasons = [
        DiscardReason::NoSafeDeliveryPoint,
        DiscardReason::NewQuery,
        DiscardReason::Reset,
        DiscardReason::Abort,
        DiscardReason::Shutdown,
        DiscardReason::AlreadyDelivered,
        DiscardReason::NoRelevantResults,
    ];
    let mut names = BTreeMap::new();
    for reason in reasons {
        let json = serde_json::to_value(reason).unwrap();
        assert_eq!(json.as_str(), Some(reason.as_str()));
        names.insert(format!("discard_reason {reason:?}"), json);
    }
    for strategy in [Strategy::None, Strategy::Heuristic, Strategy::Model] {
        let json = serde_json::to_value(strategy).unwrap();
        assert_eq!(json.as_str(), Some(strategy.as_str()));
        names.insert(format!("strategy {strategy:?}"), json);
    }
    for phase in [Phase::Fast, Phase::Refined] {
        let json = serde_json::to_value(phase).unwrap();
        assert_eq!(json.as_str(), Some(phase.as_str()));
        names.insert(format!("phase {phase:?}"), json);
    }
    for point in [
        DeliveryPoint::Initial,
        DeliveryPoint::ToolResult,
        DeliveryPoint::Discarded,
    ] {
        let json = serde_json::to_value(point).unwrap();
        assert_eq!(json.as_str(), Some(point.as_str()));
        names.insert(format!("delivery_point {point:?}"), json);
    }
    insta::assert_json_snapshot!(names);
}

#[test]
fn events_round_trip_through_json() {
    for event in [
        TelemetryEvent::Recall(recall_event()),
        TelemetryEvent::Delivery(fast_event()),
        TelemetryEvent::Delivery(discarded_event()),
    ] {
        let json = serde_json::to_string(&event).unwrap();
        let back: TelemetryEvent = serde_json::from_str(&json).unwrap();
        assert_eq!(back, event);
    }
}

#[test]
fn event_name_matches_serialized_tag() {
    for event in [
        TelemetryEvent::Recall(recall_event()),
        TelemetryEvent::Delivery(fast_event()),
    ] {
        let json = serde_json::to_value(&event).unwrap();
        assert_eq!(json["event"].as_str(), Some(event.name()));
    }
}

#[test]
fn duration_ms_keeps_sub_millisecond_precision() {
    assert!((duration_ms(Duration::from_micros(1_250)) - 1.25).abs() < 1e-9);
}

// ---- delivery tokens --------------------------------------------------------------------------

#[test]
fn fast_token_emits_fast_initial_heuristic_event() {
    let (sink, fast, terminal) = tokens();
    fast.emit(FastWait::Published, 2, Duration::from_millis(100));
    assert_eq!(sink.deliveries(), vec![fast_event()]);
    terminal.delivered(
        DeliveredAt::Initial,
        Strategy::Model,
        2,
        Duration::from_millis(120),
    );
}

#[test]
fn unused_fast_token_emits_nothing() {
    let (sink, fast, terminal) = tokens();
    drop(fast);
    assert!(sink.events().is_empty());
    terminal.discarded(DiscardReason::Reset, Strategy::None, 0, Duration::ZERO);
}

#[test]
fn terminal_delivered_emits_refined_event_at_the_given_point() {
    let (sink, _fast, terminal) = tokens();
    terminal.delivered(
        DeliveredAt::ToolResult,
        Strategy::Heuristic,
        3,
        Duration::from_millis(2_500),
    );
    assert_eq!(
        sink.deliveries(),
        vec![DeliveryEvent {
            phase: Phase::Refined,
            delivery_point: DeliveryPoint::ToolResult,
            discard_reason: None,
            strategy: Strategy::Heuristic,
            docs_selected: 3,
            latency_ms: 2_500.0,
            initial_wait: None,
        }]
    );
}

#[test]
fn terminal_discarded_emits_refined_discarded_event_with_reason() {
    let (sink, _fast, terminal) = tokens();
    terminal.discarded(
        DiscardReason::NoSafeDeliveryPoint,
        Strategy::Model,
        4,
        Duration::from_micros(1_500_750),
    );
    assert_eq!(sink.deliveries(), vec![discarded_event()]);
}

#[test]
fn consumed_terminal_token_emits_exactly_one_event() {
    let (sink, _fast, terminal) = tokens();
    terminal.discarded(
        DiscardReason::AlreadyDelivered,
        Strategy::Model,
        2,
        Duration::from_millis(700),
    );
    // The consumed token's Drop ran inside `discarded`; no abort event may follow it.
    assert_eq!(sink.deliveries().len(), 1);
    assert_eq!(
        sink.deliveries()[0].discard_reason,
        Some(DiscardReason::AlreadyDelivered)
    );
}

#[test]
fn dropping_unused_terminal_token_emits_abort_discard() {
    let (sink, _fast, terminal) = tokens();
    drop(terminal);
    assert_eq!(
        sink.deliveries(),
        vec![DeliveryEvent {
            phase: Phase::Refined,
            delivery_point: DeliveryPoint::Discarded,
            discard_reason: Some(DiscardReason::Abort),
            strategy: Strategy::None,
            docs_selected: 0,
            latency_ms: 0.0,
            initial_wait: None,
        }]
    );
}

#[test]
fn dropped_terminal_token_reports_last_noted_progress() {
    let (sink, _fast, mut terminal) = tokens();
    terminal.note_progress(Strategy::Heuristic, 2, Duration::from_millis(90));
    terminal.note_progress(Strategy::Model, 5, Duration::from_millis(640));
    assert!(sink.events().is_empty());
    drop(terminal);
    let deliveries = sink.deliveries();
    assert_eq!(deliveries.len(), 1);
    assert_eq!(deliveries[0].discard_reason, Some(DiscardReason::Abort));
    assert_eq!(deliveries[0].strategy, Strategy::Model);
    assert_eq!(deliveries[0].docs_selected, 5);
    assert!((deliveries[0].latency_ms - 640.0).abs() < 1e-9);
}

#[test]
fn terminal_event_carries_the_noted_initial_wait() {
    let (sink, _fast, mut terminal) = tokens();
    terminal.note_initial(InitialWait::WeakFastSuperseded);
    terminal.delivered(
        DeliveredAt::Initial,
        Strategy::Model,
        1,
        Duration::from_millis(40),
    );
    assert_eq!(
        sink.deliveries()[0].initial_wait,
        Some(InitialWait::WeakFastSuperseded)
    );
}

#[test]
fn fast_event_carries_the_wait_that_delivered_it() {
    let (sink, fast, _terminal) = tokens();
    fast.emit(FastWait::WeakAtCeiling, 2, Duration::from_millis(100));
    assert_eq!(
        sink.deliveries()[0].initial_wait,
        Some(InitialWait::WeakFastAtCeiling)
    );
}

#[test]
fn abort_on_drop_carries_the_noted_initial_wait() {
    let (sink, _fast, mut terminal) = tokens();
    terminal.note_initial(InitialWait::ConfidentFast);
    drop(terminal);
    assert_eq!(
        sink.deliveries()[0].initial_wait,
        Some(InitialWait::ConfidentFast)
    );
}

#[test]
fn initial_wait_wire_names_are_snake_case_and_match_as_str() {
    for wait in [
        InitialWait::ZeroWait,
        InitialWait::Settled,
        InitialWait::Fast,
        InitialWait::ConfidentFast,
        InitialWait::WeakFastSuperseded,
        InitialWait::WeakFastAtCeiling,
        InitialWait::Empty,
        InitialWait::Cancelled,
    ] {
        let json = serde_json::to_value(wait).unwrap();
        assert_eq!(json.as_str(), Some(wait.as_str()));
    }
}

#[test]
fn terminal_token_dropped_by_a_panic_still_emits_abort() {
    let (sink, fast, terminal) = tokens();
    let outcome = catch_unwind(AssertUnwindSafe(move || {
        fast.emit(FastWait::Published, 1, Duration::from_millis(100));
        let _owned = terminal;
        panic!("turn handler failed");
    }));
    assert!(outcome.is_err());
    let phases: Vec<_> = sink
        .deliveries()
        .iter()
        .map(|d| (d.phase, d.discard_reason))
        .collect();
    assert_eq!(
        phases,
        vec![
            (Phase::Fast, None),
            (Phase::Refined, Some(DiscardReason::Abort))
        ]
    );
}

#[test]
fn tokens_of_separate_recalls_are_independent() {
    let sink = Arc::new(RecordingSink::new());
    let (_fast_a, terminal_a) = DeliveryTelemetry::new(sink.clone());
    let (_fast_b, terminal_b) = DeliveryTelemetry::new(sink.clone());
    terminal_a.discarded(
        DiscardReason::NewQuery,
        Strategy::Heuristic,
        2,
        Duration::from_millis(300),
    );
    terminal_b.delivered(
        DeliveredAt::Initial,
        Strategy::Model,
        1,
        Duration::from_millis(60),
    );
    let points: Vec<_> = sink.deliveries().iter().map(|d| d.delivery_point).collect();
    assert_eq!(
        points,
        vec![DeliveryPoint::Discarded, DeliveryPoint::Initial]
    );
}

// ---- recording and fan-out sinks --------------------------------------------------------------

#[test]
fn recording_sink_keeps_emission_order() {
    let sink = RecordingSink::new();
    sink.emit(&TelemetryEvent::Delivery(fast_event()));
    emit_recall(&sink, recall_event());
    sink.emit(&TelemetryEvent::Delivery(discarded_event()));
    assert_eq!(
        sink.events(),
        vec![
            TelemetryEvent::Delivery(fast_event()),
            TelemetryEvent::Recall(recall_event()),
            TelemetryEvent::Delivery(discarded_event()),
        ]
    );
}

#[test]
fn recording_sink_splits_deliveries_and_recalls_in_order() {
    let sink = RecordingSink::new();
    sink.emit(&TelemetryEvent::Delivery(fast_event()));
    emit_recall(&sink, recall_event());
    sink.emit(&TelemetryEvent::Delivery(discarded_event()));
    assert_eq!(sink.deliveries(), vec![fast_event(), discarded_event()]);
    assert_eq!(sink.recalls(), vec![recall_event()]);
}

#[test]
fn recording_sink_clear_forgets_everything() {
    let sink = RecordingSink::new();
    emit_recall(&sink, recall_event());
    sink.clear();
    assert!(sink.events().is_empty());
}

#[test]
fn fan_out_sink_forwards_every_event_to_every_sink() {
    let first = Arc::new(RecordingSink::new());
    let second = Arc::new(RecordingSink::new());
    let fan_out = FanOutSink(vec![first.clone(), second.clone()]);
    emit_recall(&fan_out, recall_event());
    fan_out.emit(&TelemetryEvent::Delivery(fast_event()));
    let expected = vec![
        TelemetryEvent::Recall(recall_event()),
        TelemetryEvent::Delivery(fast_event()),
    ];
    assert_eq!(first.events(), expected);
    assert_eq!(second.events(), expected);
}

// ---- JSON-lines file sink ---------------------------------------------------------------------

#[test]
fn json_lines_sink_writes_one_tagged_object_per_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("telemetry.jsonl");
    let sink = Arc::new(JsonLinesSink::create(&path).unwrap());
    emit_recall(sink.as_ref(), recall_event());
    let (fast, terminal) = DeliveryTelemetry::new(sink.clone());
    fast.emit(FastWait::Published, 2, Duration::from_millis(100));
    terminal.discarded(
        DiscardReason::NoSafeDeliveryPoint,
        Strategy::Model,
        4,
        Duration::from_micros(1_500_750),
    );
    let contents = fs::read_to_string(&path).unwrap();
    insta::assert_snapshot!(contents);
}

#[cfg(target_os = "linux")]
#[test]
fn events_a_json_lines_sink_cannot_write_are_counted_with_the_first_reason() {
    let sink = JsonLinesSink::create("/dev/full").unwrap();
    assert_eq!(sink.dropped(), None);

    sink.emit(&TelemetryEvent::Recall(recall_event()));
    sink.emit(&TelemetryEvent::Delivery(fast_event()));

    let dropped = sink.dropped().expect("the writes failed");
    assert_eq!(dropped.count, 2);
    assert!(
        dropped.first_error.contains("/dev/full"),
        "{}",
        dropped.first_error
    );
}

#[test]
fn a_json_lines_sink_that_wrote_everything_dropped_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let sink = JsonLinesSink::create(dir.path().join("t.jsonl")).unwrap();

    sink.emit(&TelemetryEvent::Recall(recall_event()));

    assert_eq!(sink.dropped(), None);
}

#[test]
fn json_lines_file_reads_back_as_the_emitted_events() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("telemetry.jsonl");
    let sink = JsonLinesSink::create(&path).unwrap();
    let events = vec![
        TelemetryEvent::Recall(recall_event()),
        TelemetryEvent::Delivery(fast_event()),
        TelemetryEvent::Delivery(discarded_event()),
    ];
    for event in &events {
        sink.emit(event);
    }
    assert_eq!(read_json_lines(&path).unwrap(), events);
}

#[test]
fn json_lines_sink_appends_to_an_existing_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("telemetry.jsonl");
    JsonLinesSink::create(&path)
        .unwrap()
        .emit(&TelemetryEvent::Recall(recall_event()));
    JsonLinesSink::create(&path)
        .unwrap()
        .emit(&TelemetryEvent::Delivery(fast_event()));
    assert_eq!(
        read_json_lines(&path).unwrap(),
        vec![
            TelemetryEvent::Recall(recall_event()),
            TelemetryEvent::Delivery(fast_event()),
        ]
    );
}

#[test]
fn json_lines_sink_create_fails_when_the_directory_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let error = JsonLinesSink::create(dir.path().join("absent").join("t.jsonl")).unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
}

#[test]
fn json_lines_sink_reports_a_failed_write() {
    // /dev/full accepts the open and fails every write with ENOSPC: a real I/O error, no mocks.
    let sink = JsonLinesSink::create("/dev/full").unwrap();
    let error = sink
        .try_emit(&TelemetryEvent::Recall(recall_event()))
        .unwrap_err();
    assert!(matches!(error, TelemetryError::Write { .. }), "{error}");
}

#[test]
fn json_lines_sink_logs_a_failed_write_instead_of_panicking() {
    let sink = JsonLinesSink::create("/dev/full").unwrap();
    let captured = capture(|| sink.emit(&TelemetryEvent::Delivery(fast_event())));
    assert_eq!(captured.len(), 1);
    assert_eq!(captured[0].level, tracing::Level::WARN);
    assert_eq!(
        captured[0].fields.get("event.name").map(String::as_str),
        Some("memory.recall.delivery")
    );
    assert!(captured[0].fields.contains_key("error"));
}

#[test]
fn reading_a_malformed_json_lines_file_names_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("telemetry.jsonl");
    let good = serde_json::to_string(&TelemetryEvent::Recall(recall_event())).unwrap();
    fs::write(&path, format!("{good}\n\n{{\"event\":\"other\"}}\n")).unwrap();
    let error = read_json_lines(&path).unwrap_err();
    assert!(
        matches!(error, TelemetryError::Parse { line: 3, .. }),
        "{error}"
    );
}

// ---- tracing sink -----------------------------------------------------------------------------

#[test]
fn tracing_sink_emits_recall_name_and_fields() {
    let captured = capture(|| emit_recall(&TracingSink, recall_event()));
    assert_eq!(captured.len(), 1);
    let event = &captured[0];
    assert_eq!(event.target, "memory_recall");
    assert_eq!(event.level, tracing::Level::INFO);
    insta::assert_debug_snapshot!(event.fields);
}

#[test]
fn tracing_sink_emits_delivery_name_and_fields() {
    let captured = capture(|| TracingSink.emit(&TelemetryEvent::Delivery(discarded_event())));
    assert_eq!(captured.len(), 1);
    insta::assert_debug_snapshot!(captured[0].fields);
}

#[test]
fn tracing_sink_omits_absent_optional_fields() {
    let captured = capture(|| TracingSink.emit(&TelemetryEvent::Delivery(fast_event())));
    assert_eq!(captured.len(), 1);
    let fields = &captured[0].fields;
    assert_eq!(
        fields.get("message").map(String::as_str),
        Some("memory.recall.delivery")
    );
    assert_eq!(fields.get("phase").map(String::as_str), Some("fast"));
    assert!(!fields.contains_key("discard_reason"));
}

/// One tracing event as a test subscriber saw it.
#[derive(Debug)]
struct Captured {
    target: String,
    level: tracing::Level,
    fields: BTreeMap<String, String>,
}

/// A minimal subscriber that records every event's target, level and fields.
struct Capture(Arc<Mutex<Vec<Captured>>>);

struct FieldVisitor<'a>(&'a mut BTreeMap<String, String>);

impl tracing::field::Visit for FieldVisitor<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl tracing::Subscriber for Capture {
    fn enabled(&self, _metadata: &tracing::Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, _span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }

    fn record(&self, _span: &tracing::span::Id, _values: &tracing::span::Record<'_>) {}

    fn record_follows_from(&self, _span: &tracing::span::Id, _follows: &tracing::span::Id) {}

    fn event(&self, event: &tracing::Event<'_>) {
        let mut fields = BTreeMap::new();
        event.record(&mut FieldVisitor(&mut fields));
        self.0.lock().unwrap().push(Captured {
            target: event.metadata().target().to_owned(),
            level: *event.metadata().level(),
            fields,
        });
    }

    fn enter(&self, _span: &tracing::span::Id) {}

    fn exit(&self, _span: &tracing::span::Id) {}
}

fn capture(f: impl FnOnce()) -> Vec<Captured> {
    let store = Arc::new(Mutex::new(Vec::new()));
    tracing::subscriber::with_default(Capture(store.clone()), f);
    std::mem::take(&mut *store.lock().unwrap())
}
