//! Lion: rate-based packet-drop avoidance with maximum-burst-size pacing (LBNL "Network Lion").
//!
//! Window-based TCP learns of congestion one RTT late and probes with ever larger bursts: on a
//! 100 ms, 40 Gb/s path a window is 500 MB sent in one round trip, and slow start's last
//! doubling can lose most of a window. Lion (seed 002) instead paces: it sends bursts no larger
//! than the path's *maximum burst size* (MBS, "any burst sent into the network that exceeds the
//! MBS will potentially cause a router on the path to drop packets") separated by gaps chosen so
//! the average rate equals the estimated *available bandwidth*. A loss is only a congestion
//! signal if queueing delay rose before it; a random loss leaves the rate alone.
//!
//! The seed describes the ideas, not an algorithm; this is our reading of it, with every
//! threshold a parameter.
//!
//! **Signals**, measured once per round trip (a round ends when a packet sent after it began is
//! acknowledged):
//! - *standing queue* `q`: the smallest RTT sample of the round minus the smallest RTT ever seen.
//!   The round's minimum filters ACK-path jitter, as pathload uses trends rather than single
//!   samples. `q` above the queue threshold means a queue exists; growth above the rise
//!   threshold means it is growing. This is the *rate* signal: we send faster than the path
//!   drains.
//! - *peak* queue: the round's largest RTT sample minus the smallest ever, the queue at its
//!   highest moment, whoever built it (our bursts, cross traffic's bursts, a standing queue).
//! - *burst queue*: peak minus standing queue above the queue threshold (and above what one of
//!   our own bursts explains) — queueing that builds and drains within the round. This is the
//!   *burst* signal: bursts larger than the path absorbs at once (the MBS).
//! - *effective queue* `q_eff` (seed 002: "the MBS is also called effective queue size"): the
//!   peak queue of the last round or the current one at a congestion loss — the delay at which
//!   this path's buffer overflows, learned from the loss itself, whatever the buffer and the
//!   cross traffic make it. A buffer of a few packets shows its queue in microseconds, below
//!   any fixed threshold; once `q_eff` is known the thresholds follow it: the queue threshold
//!   becomes a quarter of it and the rise threshold an eighth (both within [20 µs, their
//!   parameter]), and a *warning level* of 0.35 of it (plus one of our bursts) marks a round
//!   that came within a cross-traffic burst of a loss.
//! - *delivered rate* `d`: the largest delivery-rate sample of the round ([`AckEvent::rate`],
//!   non-app-limited samples only), falling back to acknowledged bytes over the round's duration.
//! - *available bandwidth* `abw` (FAC2-like; SLoPS principle: delay rises iff the send rate
//!   exceeds the available bandwidth): while no queue stands the path carried everything, so
//!   `abw = max(abw, d)` is a lower bound that probing raises; once a queue stands `abw = d`,
//!   what the bottleneck actually gives us; after a cut `abw` is the new rate, and the round
//!   after it (which still delivers what was sent before) does not raise it — nor, after a
//!   loss cut the rate during a round, the round after that one. `capacity` is the largest
//!   `d` ever seen (reset by a timeout).
//! - *full rate*: the largest `d` of a round with a standing queue (not application-limited;
//!   reset by a timeout): a rate at which the bottleneck was found full.
//! - *foreign burst*: between two consecutive RTT samples the queue grew by more than 4
//!   packets at the path's rate beyond the bytes the later ACK acknowledged, and faster than
//!   the link drains it (the rise exceeds the time between the two packets' departures, the
//!   time between the ACKs less the RTTs' change). Our own packets add one packet's time each
//!   and traffic below the link's rate adds less than the link drains meanwhile; only another
//!   host's burst arriving above the link's rate (a TSO burst of a kernel sender, a router's
//!   line-rate on/off source) does both. The queue it builds is not ours to prevent: a lower
//!   rate would shorten it by our share of the arrivals, a few percent.
//! - *packet train* (Netest's and pathrate's dispersion): the initial window leaves as one
//!   burst; its ACKs return spaced by the narrow link, so the bytes after the first ACK over
//!   their spread estimate the bottleneck's capacity — trusted if at least two packets spread
//!   over no more than a quarter of the RTT, ending at the first gap of more than an eighth of
//!   it (a loss in the train, or a delayed ACK's timer).
//!
//! **State machine** (reported by `phase()`):
//! - `startup`: starts at `initial_cwnd` packets per first RTT with an MBS of `mbs_initial`;
//!   every clear round doubles the rate (`startup_gain`) and the MBS (by `mbs_step` only if
//!   bursts queued; never beyond what queues an eighth of `queue_threshold` at the path's
//!   rate, so our own bursts do not hide other traffic's) — but the rate only up to half the
//!   train's capacity. Cross traffic may
//!   take any part of the link, and a doubling past the available bandwidth overfills a buffer
//!   of less than a bandwidth-delay product before the queue is seen; from half the link,
//!   probing finds the rest in steps a shallow buffer absorbs. Seed 002: "the last few probes
//!   should be used to detect the bottleneck router's queue size and its capacity, and should
//!   not use an exponential increase". A round (after the first, whose peak is the initial
//!   window's own train) whose peak queue exceeds one of our bursts by a quarter of the queue
//!   threshold met cross traffic's bursts: the link is shared at moments, the next doubling
//!   would meet them with twice the rate, and startup ends there without a cut (probing
//!   goes on from the rate that met them). A standing queue ends startup with the rate
//!   `d · base/(base + q)` (drains what the last doubling queued, like FAST's `baseRTT/RTT`);
//!   a warning or a congestion loss ends it with a cut (below). Without a train (ACKs spread
//!   over the RTT) startup doubles until the queue shows, like BBR's.
//! - `drop_avoidance`, per round:
//!   - clear (no standing queue, no warning): back to `abw` after a drain (if more than
//!     2^-10 below it), else probe one step: from our rate if the path delivered it (within
//!     `probe_gain`), else from `abw` — the rounds in flight have not answered yet, and
//!     stepping from an unanswered rate compounds the overshoot. A round's ACKs acknowledge
//!     what left during the round before, at the rate before the last step, one `probe_gain`
//!     below ours: delivery samples a little under the rate (pacing gaps) then fall short,
//!     and the step waits a round for its answer — probing advances every other round.
//!     Below half the path's rate the round is held to the rate before the last step
//!     instead, and probing advances every round: there a step cannot overfill a buffer
//!     unless cross traffic takes half the link, a startup that a jittery path (host timers, a
//!     loaded emulator, a radio hop) ended at a few packets per RTT reaches half the link in
//!     seconds, not tens of seconds, and so does a rate cut far down by a loss shared with a
//!     loss-based competitor. A step is `probe_gain` of
//!     the rate, at least a packet per base RTT, and once `q_eff` is known at most what queues
//!     1/16 of it in one round above the available bandwidth. From `probe_gain` below the
//!     full rate a step is a quarter of that, unless the round delivered more than the full
//!     rate by more than such a step (the path has more to give now): a standing queue shows
//!     a round or two after the rate passes the path's, and full steps over those rounds
//!     queue about 15 ms on a 100 ms path (`scenarios/lab/short.toml`), which the drain then
//!     empties below the link's rate. This is BIC's "probe slowly near the last maximum"
//!     (L. Xu, K. Harfoush, I. Rhee, INFOCOM 2004) with the maximum measured, not guessed.
//!     The MBS grows by `mbs_step` (shrinks on a burst queue).
//!   - warned (peak at the warning level, no standing queue): the rate steps back by
//!     `probe_gain` — "once the MBS probe process sees the potential queuing, it slows down"
//!     (seed 002, Fig. 1) — before anything is lost; in a round with a foreign burst it
//!     holds instead (no step either way): stepping back under every other host's burst
//!     held Lion at a seventh of a 200 Mb/s link that such bursts shared at 24 Mb/s.
//!   - a growing queue: rate `d · base/(base + q)`. A stable one: `min(rate, d · base/(base +
//!     q))`. Either drain empties the queue in one round trip (it sends `d · q` bytes fewer
//!     than the link serves over `base + q`); the round after it still shows the queue, as
//!     its samples left before the drain took effect, and sends `d` instead of draining again
//!     (a second drain leaves the link idle for most of a round). A burst queue shrinks the MBS by `mbs_decrease`. A growing queue while
//!     `d < (1 − compete_drop) · rate` is *new traffic*: the path now delivers much less than
//!     we send although we did not speed up (our own probes add at most `probe_gain <
//!     compete_drop`, and an application-limited round, which explains a shortfall by itself,
//!     never counts). Lion then yields a table amount (below) of its rate and shrinks its MBS.
//! - `yield`: the first round after yielding still shows the queue built before it and is
//!   skipped; then for up to `yield_rounds` rounds Lion holds the reduced rate and watches. The
//!   queue clearing means the newcomer settled for what was yielded (another Lion) →
//!   `drop_avoidance`. A queue still growing, or `d` still `compete_drop` below our rate, means the
//!   newcomer "grabs the yielded bandwidth and keeps growing" (seed: Linux TCP) → `balance`.
//!   A queue that stands through more than `2 · yield_rounds` drop-avoidance rounds, while we
//!   drain and deliver less than our fair share, says the same of a competitor that was there
//!   from the start: a delay-based one would have let it go, and traffic that does not react
//!   cannot hold a queue we keep draining.
//! - `balance`: Lion concludes the competitor does not share by delay. Its fair share,
//!   `balance_share ·` the path's rate (the train's or the most ever delivered; one
//!   competitor), becomes a floor for the rest of the connection (no further yields, no
//!   backing off below it), and the rate rises by `balance_gain` per round, up to the path's
//!   rate, ignoring delay and loss, until the delivered rate reaches the fair share —
//!   "balance the bandwidth by gradually increasing the burst pacing". Back in
//!   `drop_avoidance`, delivering less than `(1 − compete_drop)` of the fair share re-enters
//!   `balance`. The floor goes when the buffer overflows (a congestion loss with a standing
//!   queue) in `yield_rounds` drop-avoidance rounds in a row at it: a loss-based competitor
//!   backs off after its overflow and takes many rounds to fill the buffer again, so traffic
//!   that keeps it overflowing does not react to loss (heavy unresponsive load), and holding a
//!   share against it only loses packets (at half the link beside Poisson traffic at 70 %, 6 %
//!   of ours). Lion then drains, and never sets a floor again on that connection (a timeout
//!   forgets this).
//!
//! **Shuffle yield table.** The seed gives two rows: a stream at 500–999 Mb/s yields 200 Mb/s,
//! one at 150–499 Mb/s yields 100 Mb/s, "and so on". Both rows are the same pattern read
//! within one decade [1, 10) × 10ᵏ b/s: mantissa ≥ 5 yields 2 × 10ᵏ, mantissa ≥ 1.5 yields 10ᵏ.
//! We complete the decade with mantissa < 1.5 yielding 0.5 × 10ᵏ and repeat it for every decade:
//!
//! | throughput          | yield     |   | throughput         | yield      |
//! |---------------------|-----------|---|--------------------|------------|
//! | 10–14.9 Mb/s        | 5 Mb/s    |   | 1–1.49 Gb/s        | 500 Mb/s   |
//! | 15–49.9 Mb/s        | 10 Mb/s   |   | 1.5–4.99 Gb/s      | 1 Gb/s     |
//! | 50–99.9 Mb/s        | 20 Mb/s   |   | 5–9.99 Gb/s        | 2 Gb/s     |
//! | 100–149 Mb/s        | 50 Mb/s   |   | 10–14.9 Gb/s       | 5 Gb/s     |
//! | 150–499 Mb/s (seed) | 100 Mb/s  |   | 15–49.9 Gb/s       | 10 Gb/s    |
//! | 500–999 Mb/s (seed) | 200 Mb/s  |   | 50–99.9 Gb/s       | 20 Gb/s    |
//!
//! and likewise below 10 Mb/s (1–1.49 Mb/s → 500 kb/s, …). Reasons: it reproduces both seed rows
//! exactly; the yield is always 20–67 % of the rate, so every stream gives room at any speed; and
//! the yields are a 1-2-5 series, so a newcomer receiving `n` equal yields can read the number of
//! existing streams from the multiple, which is what the seed says the table is for. The amounts
//! are scaled by `shuffle_scale`.
//!
//! **Loss.** Seed 002: Lion "does not react to random loss". A loss is *congestion* if the
//! queue was at the buffer's end when it happened: a standing queue in the last round or the
//! current one, or a peak queue at the warning level (before `q_eff` is known: any peak beyond
//! what one of our bursts causes, 20 µs above it) — or, whatever the delays say, at least 4
//! losses and 2 % of the round's packets lost, which no random loss Lion is for explains (the
//! `response` grid stops at 0.1 %) and which catches an effective queue learned too large.
//! A congestion loss (once per round) teaches `q_eff` (the peak queue of the last round and
//! this one), cuts the rate to `max(min(rate, abw) · loss_decrease, floor)`, caps the MBS to
//! the queue, and ends startup. Any other loss is random to the rate, which it leaves alone
//! (counted in `random_losses`), but it shrinks the MBS by `mbs_decrease` once per round: a
//! burst that meets cross traffic's burst is dropped for its size even when no queue stands
//! (seed 002, Figs. 2–3), and a smaller burst costs no rate. So is a loss before the first
//! round ends: the base RTT is not known yet, and the initial window's train may simply be
//! larger than the buffer. Losses while yielding or balancing change nothing either: the rate
//! was just set on purpose and the queue is the one being drained or the competitor's. A
//! retransmission timeout halves the rate, resets the MBS, forgets the floor and the capacity,
//! and returns to `startup`.
//!
//! **Burst.** The MBS never exceeds what the path's queue takes without worry: the path's rate
//! (the train's or the largest delivered) for half of `queue_threshold`, or for 0.175 of
//! `q_eff` once known (half the warning level), at least `mbs_initial` before a loss and one
//! packet after; and never a base RTT of the pacing rate.
//!
//! **Window.** Lion is paced; cwnd is only a safety cap, `cwnd_gain · rate · srtt` (at least 4
//! packets), so a stalled ACK clock cannot release an unbounded amount. The rate itself stays
//! within [4 packets, `Setup::max_cwnd` packets] per base RTT: on a path that never shows a
//! queue, startup stops doubling at the largest window the transport allows.
//!
//! **Defaults.** `queue_threshold` 1 ms: of the order of FAST's 0.75 ms MI threshold, above the
//! jitter of microsecond kernel timestamps, 83 full packets at 1 Gb/s. `rise_threshold` 0.5 ms:
//! half of that per round. `mbs_initial` 4 packets ("start small"; Linux's and BBR's smallest
//! useful window). `probe_gain` 5 % per round and `compete_drop` 20 %, four times larger, so a
//! probe is never mistaken for a newcomer. `loss_decrease` 0.85: a congestion loss on top of the
//! delay reaction is a mild correction, not a halving (the seed: no multiplicative decrease).
//! `yield_rounds` 4 and `balance_gain` 10 % per round: a newcomer gets a few RTTs to settle, and
//! balancing takes about 7 rounds to double the rate ("gradually"). `balance_share` 1/2: one
//! competitor. `cwnd_gain` 2: the window never stops the pacing at twice the rate·RTT product.
//! The fixed shares, measured on `reproduce lion-buffers` (buffers of 2–200 % of the BDP,
//! Poisson and on/off cross traffic): a warning level of 0.35 of `q_eff` keeps on/off bursts
//! from overflowing a 7-packet buffer while Poisson traffic at 80 % load rarely reaches it
//! (0.5 loses 5× more on the shallow buffers; 0.25 halves the rate on them); steps of 1/16 of
//! `q_eff` per round (1/4 and 1/8 overshoot a 33-packet buffer every few seconds); startup to
//! half the train (a full doubling to the link overfills any buffer below a BDP). On
//! `reproduce lion-matched` (1 Gb/s, 100-packet buffer, on/off bursts at line rate) the
//! startup limits are what keep the one overshoot that teaches `q_eff` small: without them
//! startup doubles to 184 Mb/s and loses 89 packets in a round, with them it stops at
//! 46 Mb/s and the first loss event costs 52.
//!
//! Sources: seed 002 (G. Jin, LBNL, "packet drop avoidance": MBS theory, FAC2, the shuffle
//! example); G. Jin, B. Tierney, "Netest: a tool to measure the maximum burst size, available
//! bandwidth and achievable throughput", ITRE 2003 (MBS, available bandwidth vs achievable
//! throughput); M. Jain, C. Dovrolis, "End-to-end available bandwidth", SIGCOMM 2002 (SLoPS: a
//! rising one-way-delay trend means the rate exceeds the available bandwidth).
//!
//! Deviations: FAC2 itself is unpublished; our estimator uses the transport's delivery-rate
//! samples and the RTT trend, not FAC2's passive measurement of cross traffic, and does not probe
//! narrow vs tight links (the seed's extra probe burst). Pacing is our layer-4 pacing rate and
//! burst limit, not the seed's layer-3 pacing. The yield assumes one newcomer and the fair share
//! one competitor (`balance_share`); inferring the number of streams from received yields is not
//! modelled. `capacity` is the all-time maximum delivered rate, not a windowed one. The
//! effective queue is learned from losses, not probed with bursts of growing size as Netest
//! does (that is `longhaul probe`'s job): a connection learns it once it has lost, and a path
//! that never loses keeps the fixed thresholds. Against a loss-based competitor that starts with
//! it (`reproduce lion-contest`), the losses of the two slow starts are congestion to Lion,
//! which backs off; balancing engages only once the competitor's queue has stood for
//! `2 · yield_rounds` rounds, and a competitor that leaves the link short of full (no queue)
//! is met by probing alone. The delay signals have no noise floor of their own: RTT samples
//! that jitter by a few tenths of a millisecond (σ) peak above `queue_threshold`'s quarter in
//! every round and end startup in its first rounds, and jitter of 1 ms (σ) puts the round's
//! smallest sample a millisecond above the smallest ever, read as a standing queue (Lion then
//! holds about a fifth of `scenarios/lab/short.toml`'s link with `jitter = "1ms"`). Beside
//! heavy unresponsive traffic a standing queue of its random walk still looks like a
//! competitor's: Lion balances, and loses at the floor until it gives the floor up (100 Mb/s,
//! 40 ms, Poisson traffic at 70 Mb/s, buffers of a half and a whole BDP: 0.48 and 0.52 % of its
//! packets, against CUBIC's 0.32 and 0.19 %).
//!
//! The file is long because it is one controller: the header above is the algorithm's only
//! full description, and the code is one state machine over those signals, which splitting
//! would scatter.

use crate::controller::{CongestionControl, Setup, INFINITE_SSTHRESH};
use crate::event::{AckEvent, LossEvent, RtoEvent};
use crate::params::{ParamError, ParamKind, ParamSpec, Params, Value};
use crate::registry::Algorithm;
use crate::time::Time;

/// The rate never falls below this many packets per base RTT (nor the window below this many).
const MIN_PIPE_PACKETS: f64 = 4.0;

/// A rise of the queue between two of our RTT samples, beyond our own bytes, of more than this
/// many packets at the path's rate (and faster than the link drains) is other traffic's burst.
const FOREIGN_RISE: f64 = 4.0;

/// The smallest queueing delay taken as a signal, seconds: above microsecond timestamps and a
/// host's scheduling jitter.
const MIN_QUEUE_SIGNAL: f64 = 20e-6;

/// Startup doubles up to this share of the initial window's train capacity; probing finds
/// the rest.
const STARTUP_TRAIN_SHARE: f64 = 0.5;

/// The warning level, as a share of the effective queue: a round whose queue reached it is
/// one burst of cross traffic away from a loss.
const WARN_SHARE: f64 = 0.35;

/// In startup a burst grows to at most what queues this share of `queue_threshold` at the
/// path's rate: a burst's own queue then stays below what marks cross traffic's bursts.
const STARTUP_BURST_SHARE: f64 = 1.0 / 8.0;

/// In startup, a round (after the first) whose peak queue exceeds one of our bursts by this
/// share of `queue_threshold` met cross traffic's bursts: the exponential increase ends there.
const CROSS_PEAK_SHARE: f64 = 1.0 / 4.0;

/// Once the effective queue is known, a probe step adds at most what queues this share of it
/// in one round above the available bandwidth.
const STEP_SHARE: f64 = 1.0 / 16.0;

/// Rates within this fraction of each other are the same rate: a kernel's delivery-rate
/// samples have whole-µs intervals (one part in 10^4 of a 10 ms sample), so a rate delivered
/// in full can measure a hair above itself.
const SAME_RATE: f64 = 1.0 / 1024.0;

/// Near the rate at which the bottleneck was last found full, a probing step is
/// `probe_gain / 2^NEAR_SHIFT` of the rate, until the path delivers more than that rate.
const NEAR_SHIFT: u32 = 2;

/// A queue standing through more than this many times `yield_rounds` drop-avoidance rounds,
/// while we drain and deliver less than our fair share, is a competitor that does not share by
/// delay: twice the watch a yield gets.
const STANDING_ROUNDS_FACTOR: u32 = 2;

/// A round with at least this many losses, and at least `RANDOM_LOSS_SHARE` of its packets
/// lost, overflows the buffer whatever the delays said: random loss that heavy is not what
/// Lion is for (the `response` grid's highest rate is 0.1 %).
const RANDOM_LOSS_BURST: u32 = 4;
const RANDOM_LOSS_SHARE: f64 = 0.02;

/// Lion's parameters: queue thresholds, burst size, rate gains and the competition rules.
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "queue_threshold",
        kind: ParamKind::Float { min: 0.0, max: 1.0 },
        default: Value::Float(0.001),
        unit: "s",
        help: "queueing delay above which a queue is taken to exist",
    },
    ParamSpec {
        name: "rise_threshold",
        kind: ParamKind::Float { min: 0.0, max: 1.0 },
        default: Value::Float(0.0005),
        unit: "s",
        help: "growth of the queueing delay from one round to the next that counts as rising",
    },
    ParamSpec {
        name: "mbs_initial",
        kind: ParamKind::Float { min: 1.0, max: 1e6 },
        default: Value::Float(4.0),
        unit: "packets",
        help: "burst size at start and after a timeout",
    },
    ParamSpec {
        name: "mbs_max",
        kind: ParamKind::Float { min: 1.0, max: 1e6 },
        default: Value::Float(4096.0),
        unit: "packets",
        help: "largest burst size",
    },
    ParamSpec {
        name: "mbs_step",
        kind: ParamKind::Float { min: 0.0, max: 1e4 },
        default: Value::Float(1.0),
        unit: "packets",
        help: "burst growth per clear round once a queue has been seen",
    },
    ParamSpec {
        name: "mbs_decrease",
        kind: ParamKind::Float {
            min: 0.05,
            max: 1.0,
        },
        default: Value::Float(0.75),
        unit: "",
        help: "burst size factor when the queue grows or a congestion loss occurs",
    },
    ParamSpec {
        name: "startup_gain",
        kind: ParamKind::Float { min: 1.0, max: 4.0 },
        default: Value::Float(2.0),
        unit: "",
        help: "rate factor per clear round in startup",
    },
    ParamSpec {
        name: "probe_gain",
        kind: ParamKind::Float { min: 0.0, max: 1.0 },
        default: Value::Float(0.05),
        unit: "",
        help: "relative rate increase per clear round in drop avoidance",
    },
    ParamSpec {
        name: "compete_drop",
        kind: ParamKind::Float {
            min: 0.01,
            max: 0.99,
        },
        default: Value::Float(0.2),
        unit: "",
        help:
            "delivered-rate shortfall (fraction of our rate) meaning new traffic when the queue rises",
    },
    ParamSpec {
        name: "loss_decrease",
        kind: ParamKind::Float {
            min: 0.05,
            max: 1.0,
        },
        default: Value::Float(0.85),
        unit: "",
        help: "rate factor after a loss that followed queueing",
    },
    ParamSpec {
        name: "shuffle_scale",
        kind: ParamKind::Float {
            min: 0.0,
            max: 10.0,
        },
        default: Value::Float(1.0),
        unit: "",
        help: "scale of the shuffle yield table",
    },
    ParamSpec {
        name: "yield_rounds",
        // At most 100: the kernel program counts rounds, up to 2 · yield_rounds, in 8 bits.
        kind: ParamKind::Int { min: 1, max: 100 },
        default: Value::Int(4),
        unit: "rounds",
        help: "rounds to watch a newcomer after yielding",
    },
    ParamSpec {
        name: "balance_gain",
        kind: ParamKind::Float {
            min: 0.001,
            max: 1.0,
        },
        default: Value::Float(0.1),
        unit: "",
        help: "relative rate increase per round while balancing against a non-yielding competitor",
    },
    ParamSpec {
        name: "balance_share",
        kind: ParamKind::Float {
            min: 0.05,
            max: 1.0,
        },
        default: Value::Float(0.5),
        unit: "",
        help: "fair share to balance up to, as a fraction of the largest delivered rate seen",
    },
    ParamSpec {
        name: "cwnd_gain",
        kind: ParamKind::Float {
            min: 1.0,
            max: 100.0,
        },
        default: Value::Float(2.0),
        unit: "",
        help: "window cap as a multiple of rate × smoothed RTT",
    },
];

/// Lion as the registry lists it (`lion`).
pub const ALGORITHM: Algorithm = Algorithm {
    name: "lion",
    summary: "paces at the available bandwidth in bursts of at most the MBS; ignores random loss",
    source: "seed 002 (LBNL Network Lion, packet drop avoidance); Jin & Tierney ITRE 2003",
    params: PARAMS,
    presets: &[],
    build,
};

fn build(p: &Params, setup: &Setup) -> Result<Box<dyn CongestionControl>, ParamError> {
    Ok(Box::new(Lion::new(*setup, LionConfig::from_params(p)?)))
}

/// Lion's validated settings (see the parameter table for meanings).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LionConfig {
    /// Queueing delay, in seconds, above which a queue is taken to exist.
    pub queue_threshold: f64,
    /// Growth of the queueing delay from one round to the next, in seconds, that counts as rising.
    pub rise_threshold: f64,
    /// Burst size at start and after a timeout, in packets.
    pub mbs_initial: f64,
    /// Largest burst size, in packets.
    pub mbs_max: f64,
    /// Burst growth per clear round once a queue has been seen, in packets.
    pub mbs_step: f64,
    /// Factor applied to the burst size when the queue grows or a congestion loss occurs.
    pub mbs_decrease: f64,
    /// Rate factor per clear round in startup.
    pub startup_gain: f64,
    /// Relative rate increase per clear round in drop avoidance.
    pub probe_gain: f64,
    /// Shortfall of the delivered rate, as a fraction of ours, that means new traffic when the
    /// queue rises.
    pub compete_drop: f64,
    /// Rate factor after a loss that followed queueing.
    pub loss_decrease: f64,
    /// Scale of the shuffle yield table ([`shuffle_yield`]).
    pub shuffle_scale: f64,
    /// Rounds to watch a newcomer after yielding to it.
    pub yield_rounds: u32,
    /// Relative rate increase per round while balancing against a competitor that does not yield.
    pub balance_gain: f64,
    /// Fair share to balance up to, as a fraction of the largest delivered rate seen.
    pub balance_share: f64,
    /// Window cap as a multiple of rate × smoothed RTT.
    pub cwnd_gain: f64,
}

impl LionConfig {
    /// The typed values of validated `lion` parameters; an `mbs_initial` above `mbs_max`, or a
    /// `compete_drop` not above `probe_gain`, is an error.
    pub fn from_params(p: &Params) -> Result<LionConfig, ParamError> {
        let c = LionConfig {
            queue_threshold: p.f64("queue_threshold"),
            rise_threshold: p.f64("rise_threshold"),
            mbs_initial: p.f64("mbs_initial"),
            mbs_max: p.f64("mbs_max"),
            mbs_step: p.f64("mbs_step"),
            mbs_decrease: p.f64("mbs_decrease"),
            startup_gain: p.f64("startup_gain"),
            probe_gain: p.f64("probe_gain"),
            compete_drop: p.f64("compete_drop"),
            loss_decrease: p.f64("loss_decrease"),
            shuffle_scale: p.f64("shuffle_scale"),
            yield_rounds: p.i64("yield_rounds").clamp(1, 100) as u32,
            balance_gain: p.f64("balance_gain"),
            balance_share: p.f64("balance_share"),
            cwnd_gain: p.f64("cwnd_gain"),
        };
        if c.mbs_initial > c.mbs_max {
            return Err(p.invalid(format!(
                "mbs_initial ({}) must not exceed mbs_max ({})",
                c.mbs_initial, c.mbs_max
            )));
        }
        // A probe of +probe_gain shortens the delivered/sent ratio by up to probe_gain; new
        // traffic must be told apart from that.
        if c.compete_drop <= c.probe_gain {
            return Err(p.invalid(format!(
                "compete_drop ({}) must exceed probe_gain ({}), \
                 or our own probes look like new traffic",
                c.compete_drop, c.probe_gain
            )));
        }
        Ok(c)
    }

    /// The registry defaults.
    pub fn defaults() -> LionConfig {
        let p = Params::defaults("lion", PARAMS, &[], None).expect("no preset requested");
        LionConfig::from_params(&p).expect("the defaults are consistent")
    }
}

/// The shuffle table: the bandwidth, in bits/s, a stream delivering `rate_bps` yields to new
/// traffic (see the header). Zero below 1 b/s.
pub fn shuffle_yield(rate_bps: f64) -> f64 {
    if rate_bps.is_nan() || rate_bps < 1.0 || rate_bps.is_infinite() {
        return 0.0;
    }
    // The decade, by exact multiplication so that 10^k boundaries land in the right row.
    let mut decade = 1.0;
    while decade * 10.0 <= rate_bps {
        decade *= 10.0;
    }
    let mantissa = rate_bps / decade;
    if mantissa >= 5.0 {
        2.0 * decade
    } else if mantissa >= 1.5 {
        decade
    } else {
        0.5 * decade
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Startup,
    DropAvoidance,
    Yield { rounds: u32 },
    Balance,
}

/// Per-round measurements.
#[derive(Debug, Clone, Copy)]
struct RoundStats {
    start: Time,
    min_rtt: f64,
    max_rtt: f64,
    max_rate: f64,
    /// Bytes acknowledged after the round's first ACK (the first one's packets left before the
    /// round began), and when the last of those ACKs came.
    acked_bytes: u64,
    last_ack: Time,
    /// Delivery-rate samples in the round, and how many were not application-limited.
    rate_samples: u32,
    full_rate_samples: u32,
    /// ACKs of the round sent while window-limited (the signal when there are no rate samples).
    cwnd_limited_acks: u32,
    reduced_by_loss: bool,
    /// Packets declared lost in the round.
    lost: u32,
    /// A loss of this round already shrank the burst.
    burst_cut_by_loss: bool,
    /// Between two consecutive RTT samples the queue grew by more than [`FOREIGN_RISE`]
    /// packets beyond the bytes the later ACK acknowledged, and faster than the link drains
    /// it: other traffic arriving faster than the link's rate built that queue.
    foreign: bool,
}

impl RoundStats {
    fn new(start: Time) -> RoundStats {
        RoundStats {
            start,
            min_rtt: f64::INFINITY,
            max_rtt: 0.0,
            max_rate: 0.0,
            acked_bytes: 0,
            last_ack: start,
            rate_samples: 0,
            full_rate_samples: 0,
            cwnd_limited_acks: 0,
            reduced_by_loss: false,
            lost: 0,
            burst_cut_by_loss: false,
            foreign: false,
        }
    }

    /// True if the sender did not use its rate in this round: every rate sample was
    /// application-limited, or, without rate samples, no ACK was window-limited.
    fn app_limited(&self) -> bool {
        if self.rate_samples > 0 {
            self.full_rate_samples == 0
        } else {
            self.cwnd_limited_acks == 0
        }
    }
}

/// Lion's state.
#[derive(Debug, Clone)]
pub struct Lion {
    setup: Setup,
    cfg: LionConfig,
    phase: Phase,
    /// Pacing rate, bytes/s (0 until the first RTT sample).
    rate: f64,
    /// Available-bandwidth estimate, bytes/s.
    abw: f64,
    /// Largest delivered rate seen, bytes/s.
    capacity: f64,
    /// Maximum burst size, packets.
    mbs: f64,
    /// Rate below which drop avoidance does not back off (set by balancing), bytes/s.
    floor: f64,
    base_rtt: f64,
    srtt: f64,
    /// Queueing delay of the last completed round, seconds.
    q_prev: Option<f64>,
    /// Largest queueing delay of the last completed round, seconds.
    peak_prev: f64,
    /// Effective queue: the largest queueing delay seen in a round with a congestion loss,
    /// seconds; 0 until one.
    q_eff: f64,
    /// The bottleneck's rate from the initial window's ACK dispersion, bytes/s; 0 if unknown.
    train: f64,
    /// A round has completed: the base RTT is measured.
    settled: bool,
    /// The initial window's train was measured (`train` is its result, 0 if it could not
    /// tell).
    train_measured: bool,
    /// The last RTT sample, seconds (0 before the first).
    last_rtt: f64,
    /// Balancing gave up: the buffer overflowed at our floor round after round, so the
    /// traffic beside us does not react to loss; no floor is set again.
    unresponsive: bool,
    /// Drop-avoidance rounds in a row the buffer overflowed at the floor.
    overflowing: u32,
    /// The rate was cut (a warning or a congestion loss) since the last round ended.
    cut: bool,
    /// Consecutive drop-avoidance rounds with a standing queue.
    standing: u32,
    /// The most the path delivered in a round a standing queue showed, bytes/s (0: none yet):
    /// a rate at which the bottleneck was full.
    full: f64,
    /// The last round set the rate to drain the queue it showed.
    drained: bool,
    round_end: u64,
    round: RoundStats,
    cwnd: f64,
    random_losses: u64,
}

impl Lion {
    /// A controller in startup, with a burst size of `mbs_initial` and no rate estimate yet.
    pub fn new(setup: Setup, cfg: LionConfig) -> Lion {
        Lion {
            setup,
            cfg,
            phase: Phase::Startup,
            rate: 0.0,
            abw: 0.0,
            capacity: 0.0,
            mbs: cfg.mbs_initial,
            floor: 0.0,
            base_rtt: f64::INFINITY,
            srtt: 0.0,
            q_prev: None,
            peak_prev: 0.0,
            q_eff: 0.0,
            train: 0.0,
            settled: false,
            train_measured: false,
            last_rtt: 0.0,
            unresponsive: false,
            overflowing: 0,
            cut: false,
            standing: 0,
            full: 0.0,
            drained: false,
            round_end: 0,
            round: RoundStats::new(Time::ZERO),
            cwnd: setup.clamp_cwnd(setup.initial_cwnd),
            random_losses: 0,
        }
    }

    /// The available-bandwidth estimate, bytes/s.
    pub fn available_bandwidth(&self) -> f64 {
        self.abw
    }

    /// The current maximum burst size, packets (fractional; [`CongestionControl::max_burst`]
    /// rounds it).
    pub fn mbs(&self) -> f64 {
        self.mbs
    }

    /// Losses judged random (no preceding queue) and therefore ignored.
    pub fn random_losses(&self) -> u64 {
        self.random_losses
    }

    /// The effective queue a congestion loss taught, seconds (`None` before one).
    pub fn effective_queue(&self) -> Option<f64> {
        (self.q_eff > 0.0).then_some(self.q_eff)
    }

    fn mss(&self) -> f64 {
        self.setup.mss as f64
    }

    fn min_rate(&self) -> f64 {
        let base = if self.base_rtt.is_finite() && self.base_rtt > 0.0 {
            self.base_rtt
        } else {
            1.0
        };
        MIN_PIPE_PACKETS * self.mss() / base
    }

    /// The fastest rate that can matter: the largest window (`Setup::max_cwnd`) per base RTT.
    /// Startup stops doubling here rather than running to infinity when no queue ever shows.
    fn max_rate(&self) -> f64 {
        let base = if self.base_rtt.is_finite() && self.base_rtt > 0.0 {
            self.base_rtt
        } else {
            1e-6
        };
        self.setup.max_cwnd * self.mss() / base
    }

    fn set_rate(&mut self, rate: f64) {
        self.rate = rate.max(self.min_rate()).min(self.max_rate());
    }

    /// The bottleneck's rate as far as we know it: the largest delivered rate or the initial
    /// window's train, bytes/s (0 before either).
    fn path_rate(&self) -> f64 {
        self.capacity.max(self.train)
    }

    /// A threshold that follows the effective queue once a congestion loss taught it: `q_eff`
    /// divided by `div`, within [`MIN_QUEUE_SIGNAL`, `fixed`]; `fixed` before.
    fn learned(&self, div: f64, fixed: f64) -> f64 {
        if self.q_eff > 0.0 {
            (self.q_eff / div).max(MIN_QUEUE_SIGNAL).min(fixed)
        } else {
            fixed
        }
    }

    /// Standing queueing delay that counts as a queue, seconds: `queue_threshold`, or a
    /// quarter of the effective queue.
    fn queue_thr(&self) -> f64 {
        self.learned(4.0, self.cfg.queue_threshold)
    }

    /// Growth of the standing queue per round that counts as rising, seconds: `rise_threshold`,
    /// or an eighth of the effective queue.
    fn rise_thr(&self) -> f64 {
        self.learned(8.0, self.cfg.rise_threshold)
    }

    /// Queueing delay, reached at any moment of a round, that warns of losses to come:
    /// `WARN_SHARE` of the effective queue (infinite before a congestion loss taught it).
    fn warn_thr(&self) -> f64 {
        if self.q_eff > 0.0 {
            (self.q_eff * WARN_SHARE).max(MIN_QUEUE_SIGNAL)
        } else {
            f64::INFINITY
        }
    }

    /// The queueing delay one of our own bursts causes at the bottleneck, seconds.
    fn own_burst_delay(&self) -> f64 {
        let c = self.path_rate();
        if c > 0.0 {
            self.mbs * self.mss() / c
        } else {
            0.0
        }
    }

    /// The largest burst the path's queue takes without worry, packets: the bottleneck's rate
    /// for half the warning level, or for half of `queue_threshold` before a loss taught the
    /// effective queue (then never below `mbs_initial`; after, never below one packet);
    /// unlimited while the rate of the path is unknown.
    fn mbs_cap(&self) -> f64 {
        let c = self.path_rate();
        if c <= 0.0 {
            return f64::INFINITY;
        }
        if self.q_eff > 0.0 {
            (c * self.q_eff * WARN_SHARE / 2.0 / self.mss()).max(1.0)
        } else {
            (c * self.cfg.queue_threshold / 2.0 / self.mss()).max(self.cfg.mbs_initial)
        }
    }

    /// The largest burst startup grows to, packets: the path's rate for `STARTUP_BURST_SHARE`
    /// of `queue_threshold`, at least `mbs_initial`; unlimited while the path's rate is
    /// unknown.
    fn startup_mbs_cap(&self) -> f64 {
        let c = self.path_rate();
        if c <= 0.0 {
            return f64::INFINITY;
        }
        (c * self.cfg.queue_threshold * STARTUP_BURST_SHARE / self.mss()).max(self.cfg.mbs_initial)
    }

    /// Grow the burst, never beyond `mbs_max`, the queue's cap ([`Lion::mbs_cap`]) nor one base
    /// RTT at the pacing rate (a burst longer than the pipe is no longer a burst).
    fn grow_mbs(&mut self, to: f64) {
        let pipe = if self.base_rtt.is_finite() {
            (self.rate * self.base_rtt / self.mss()).max(self.mbs)
        } else {
            f64::INFINITY
        };
        self.mbs = to
            .min(pipe)
            .min(self.cfg.mbs_max)
            .min(self.mbs_cap())
            .max(1.0);
    }

    /// The share of the rate a step near the full rate adds.
    fn fine_gain(&self) -> f64 {
        self.cfg.probe_gain / f64::from(1u32 << NEAR_SHIFT)
    }

    /// The rate one clear round adds: `probe_gain` of the rate, but at least a packet per base
    /// RTT, and once the effective queue is known at most what queues `STEP_SHARE` of it in one
    /// round above the available bandwidth.
    fn probe_step(&self, near: bool) -> f64 {
        let base = self.base_rtt;
        let mut step = self.rate * self.cfg.probe_gain;
        if self.q_eff > 0.0 {
            step = step.min(STEP_SHARE * self.q_eff * self.path_rate() / base);
        }
        if near {
            step = step.min(self.rate * self.fine_gain());
        }
        step.max(self.mss() / base)
    }

    /// Marks the round [`RoundStats::foreign`] if the queue grew between the last RTT sample
    /// and this one (`rtt`, seconds) by more than [`FOREIGN_RISE`] packets beyond the bytes
    /// this ACK acknowledged, and faster than the link drains it: the rise exceeds the time
    /// between the two packets' departures (the time between the ACKs less the RTTs' change).
    /// Our own packets add one packet's time each at the path's rate, and traffic below the
    /// link's rate adds less than the link drains meanwhile; only a burst arriving faster than
    /// the link serves it (another host's TSO burst, a router's line-rate on/off source) does
    /// both. Uses the previous ACK's time, which the caller has not yet advanced.
    fn note_foreign_rise(&mut self, ev: &AckEvent, rtt: f64) {
        let c = self.path_rate();
        if self.last_rtt <= 0.0 || c <= 0.0 {
            return;
        }
        let grew = rtt - self.last_rtt;
        let rise = grew - ev.acked_bytes as f64 / c;
        let apart = ev.now.saturating_since(self.round.last_ack).as_secs_f64() - grew;
        if rise > FOREIGN_RISE * self.mss() / c && rise > apart {
            self.round.foreign = true;
        }
    }

    fn shrink_mbs(&mut self) {
        self.mbs = (self.mbs * self.cfg.mbs_decrease).max(1.0);
    }

    /// Bytes/s to yield to new traffic at our current rate.
    fn yield_amount(&self) -> f64 {
        shuffle_yield(self.rate * 8.0) / 8.0 * self.cfg.shuffle_scale
    }

    /// True if the last round or the current one so far showed a standing queue.
    fn queue_seen(&self) -> bool {
        let now = self.round.min_rtt - self.base_rtt;
        let thr = self.queue_thr();
        self.q_prev.is_some_and(|q| q > thr) || (now.is_finite() && now > thr)
    }

    /// The largest queueing delay of the last round and the current one so far, seconds.
    fn recent_peak(&self) -> f64 {
        let now = if self.round.max_rtt > 0.0 {
            self.round.max_rtt - self.base_rtt
        } else {
            0.0
        };
        now.max(self.peak_prev).max(0.0)
    }

    /// True if a loss now is congestion: a standing queue, or a queue that reached the warning
    /// level (before the effective queue is known: more than one of our bursts explains).
    fn loss_is_congestion(&self) -> bool {
        let level = if self.q_eff > 0.0 {
            self.warn_thr()
        } else {
            self.own_burst_delay() + MIN_QUEUE_SIGNAL
        };
        // More losses in a round than random loss explains: whatever the delays say, the
        // buffer overflows (the effective queue learned before may be too large).
        let acked = self.round.acked_bytes as f64 / self.mss();
        let many = self.round.lost >= RANDOM_LOSS_BURST
            && f64::from(self.round.lost) >= RANDOM_LOSS_SHARE * acked;
        self.queue_seen() || self.recent_peak() >= level || many
    }

    /// The once-per-round decisions of the state machine (see the header).
    fn end_round(&mut self, now: Time) {
        let r = self.round;
        if !r.min_rtt.is_finite() {
            return;
        }
        let cfg = self.cfg;
        let base = self.base_rtt;
        // Whole nanoseconds, as the samples are: a difference of two f64 seconds is a few
        // 1e-19 s off, which would decide a tie with a threshold either way.
        let q = ((r.min_rtt - base) * 1e9).round().max(0.0) / 1e9;
        let peak = ((r.max_rtt - base) * 1e9).round().max(0.0) / 1e9;
        let secs = now.saturating_since(r.start).as_secs_f64();
        let delivered = if r.max_rate > 0.0 {
            r.max_rate
        } else if secs > 0.0 {
            r.acked_bytes as f64 / secs
        } else {
            0.0
        };
        if !self.train_measured {
            self.measure_train();
        }
        let first_round = !self.settled;
        self.settled = true;
        let (thr, rise_thr, warn) = (self.queue_thr(), self.rise_thr(), self.warn_thr());
        let queued = q > thr;
        // The queue reached the warning level at some moment of the round: one more step, or
        // a burst of the cross traffic, would overflow it.
        let own = self.own_burst_delay();
        let warned = peak >= warn + own;
        // Queueing that builds and drains within the round: our bursts overflow what the path
        // absorbs at once.
        let burst_queue = r.max_rtt - r.min_rtt > thr.max(own);
        // Queueing at some moment of the round that our bursts do not explain: other traffic's
        // bursts share the bottleneck. The first round's peak is the initial window's train.
        let cross_peak = !first_round && peak > own + CROSS_PEAK_SHARE * thr;
        let rising = queued && self.q_prev.is_some_and(|p| q - p > rise_thr);
        let squeezed = delivered < (1.0 - cfg.compete_drop) * self.rate;
        let drain = delivered * base / (base + q);
        // Probing near the most the path ever delivered goes in fine steps, unless this round
        // delivered more than that.
        let fine = self.fine_gain();
        let near = self.full > 0.0
            && self.rate >= self.full * (1.0 - cfg.probe_gain)
            && delivered <= self.full * (1.0 + fine);
        self.capacity = self.capacity.max(delivered);
        if queued && !r.app_limited() {
            self.full = self.full.max(delivered);
        }
        let drained = std::mem::take(&mut self.drained);
        // A round right after a cut still delivers what was sent before it: it says nothing
        // new of the available bandwidth.
        let stale = std::mem::take(&mut self.cut);
        if r.reduced_by_loss {
            // A loss cut the rate during this round: the next round's ACKs still acknowledge
            // what left before the cut.
            self.cut = true;
        }
        self.abw = if queued {
            delivered
        } else if stale {
            self.abw
        } else {
            self.abw.max(delivered)
        };

        let fair = cfg.balance_share * self.path_rate();
        self.standing = if queued && self.phase == Phase::DropAvoidance {
            self.standing.saturating_add(1)
        } else {
            0
        };
        // Rounds in a row of drop avoidance in which the buffer overflowed at the floor that
        // balancing left.
        let at_floor = self.floor > 0.0 && self.phase == Phase::DropAvoidance;
        self.overflowing = if at_floor && queued && r.reduced_by_loss {
            self.overflowing.saturating_add(1)
        } else {
            0
        };
        if self.overflowing >= cfg.yield_rounds {
            // A loss-based competitor backs off after it overflows the buffer and takes many
            // rounds to fill it again; traffic that keeps it overflowing round after round
            // while we hold our share does not react to loss (heavy unresponsive load): the
            // share is not ours to defend against it.
            self.floor = 0.0;
            self.unresponsive = true;
            self.overflowing = 0;
            self.set_rate(self.rate.min(drain));
            self.q_prev = Some(q);
            self.peak_prev = peak;
            return;
        }
        match self.phase {
            Phase::Startup => {
                if queued {
                    self.phase = Phase::DropAvoidance;
                    self.drained = true;
                    self.set_rate(drain);
                } else if warned {
                    self.phase = Phase::DropAvoidance;
                    self.back_off(1.0 - cfg.probe_gain);
                } else if !r.app_limited() {
                    // Double, but only up to half the capacity the initial window's train
                    // showed: cross traffic may take any part of the rest, and probing
                    // finds it without overshooting by more than a step. Not at all once
                    // cross traffic's bursts queue at moments: a doubling would meet them
                    // with twice the rate before a standing queue shows; probing takes over
                    // from the rate that met them, uncut.
                    let target = if cross_peak {
                        0.0
                    } else if self.train > 0.0 {
                        STARTUP_TRAIN_SHARE * self.train
                    } else {
                        f64::INFINITY
                    };
                    let doubled = self.rate * cfg.startup_gain;
                    if doubled >= target {
                        self.phase = Phase::DropAvoidance;
                        self.set_rate(self.rate.max(target));
                    } else {
                        self.set_rate(doubled);
                    }
                    let to = if burst_queue {
                        self.mbs + cfg.mbs_step
                    } else {
                        self.mbs * 2.0
                    };
                    self.grow_mbs(to.min(self.startup_mbs_cap()));
                }
            }
            Phase::DropAvoidance => {
                if !queued && !warned {
                    if !r.app_limited() {
                        // Back to the available bandwidth after a drain, then probe above it.
                        // Probe from our rate if the path delivered it, else from the
                        // available bandwidth: the rounds in flight have not answered yet.
                        // Below half the path's rate the round answers the rate before the
                        // last step (its ACKs acknowledge what left in the round before), so a
                        // step need not wait for its answer.
                        let step = self.probe_step(near);
                        let answered = if self.rate < STARTUP_TRAIN_SHARE * self.path_rate() {
                            (self.rate - step).max(0.0)
                        } else {
                            self.rate
                        };
                        let next = if self.rate < self.abw * (1.0 - SAME_RATE) {
                            self.abw
                        } else {
                            (if delivered >= answered * (1.0 - cfg.probe_gain) {
                                self.rate
                            } else {
                                self.rate.min(self.abw)
                            }) + step
                        };
                        self.set_rate(next);
                    }
                    if burst_queue {
                        self.shrink_mbs();
                    } else if !r.app_limited() {
                        self.grow_mbs(self.mbs + cfg.mbs_step);
                    }
                } else if !queued {
                    // Warned: step back before the queue overflows, unless another host's
                    // burst built the peak (a lower rate would not shorten it): then hold.
                    if !r.foreign {
                        self.back_off(1.0 - cfg.probe_gain);
                    }
                } else if self.floor > 0.0 && delivered < (1.0 - cfg.compete_drop) * fair {
                    // The known aggressive competitor pushed us below our share again.
                    self.phase = Phase::Balance;
                } else if self.standing > STANDING_ROUNDS_FACTOR * cfg.yield_rounds
                    && self.floor == 0.0
                    && !self.unresponsive
                    && delivered < fair
                    && !r.app_limited()
                {
                    // We drained for many rounds and the queue still stands: a competitor
                    // keeps it full and does not share by delay.
                    self.floor = fair;
                    self.phase = Phase::Balance;
                } else if rising && squeezed && !r.app_limited() && self.floor == 0.0 {
                    let y = self.yield_amount();
                    self.set_rate(self.rate - y);
                    self.shrink_mbs();
                    self.phase = Phase::Yield { rounds: 0 };
                } else if rising {
                    self.drained = true;
                    self.set_rate(drain.max(self.floor));
                } else if drained {
                    // The last round's drain removes the queue its round showed within one
                    // round trip; this round's samples left before it took effect. Draining
                    // again would empty the link: send what the path delivers.
                    self.set_rate(delivered.max(self.floor));
                } else {
                    // A queue stands: send what is delivered, less what drains it.
                    self.drained = true;
                    self.set_rate(self.rate.min(drain).max(self.floor));
                }
                if queued && burst_queue {
                    self.shrink_mbs();
                }
            }
            Phase::Yield { rounds: 0 } => {
                // This round still carried the queue built before the yield took effect.
                self.phase = Phase::Yield { rounds: 1 };
            }
            Phase::Yield { rounds } => {
                if !queued {
                    self.phase = Phase::DropAvoidance;
                } else if (rising || squeezed) && !self.unresponsive {
                    self.floor = fair;
                    self.phase = Phase::Balance;
                } else if rounds >= cfg.yield_rounds {
                    self.phase = Phase::DropAvoidance;
                } else {
                    self.phase = Phase::Yield { rounds: rounds + 1 };
                }
            }
            Phase::Balance => {
                if delivered >= fair {
                    self.phase = Phase::DropAvoidance;
                } else {
                    let raised = (self.rate * (1.0 + cfg.balance_gain)).min(self.path_rate());
                    self.set_rate(raised.max(self.rate));
                    self.grow_mbs(self.mbs + cfg.mbs_step);
                }
            }
        }
        self.q_prev = Some(q);
        self.peak_prev = peak;
    }

    /// Lower the rate to `factor` of the smaller of it and the available bandwidth (never
    /// below the floor) and take that as the available bandwidth: probing must not jump back
    /// to the rate that queued or lost. Shrinks the burst.
    fn back_off(&mut self, factor: f64) {
        let from = if self.abw > 0.0 {
            self.rate.min(self.abw)
        } else {
            self.rate
        };
        self.set_rate((from * factor).max(self.floor));
        self.abw = self.rate;
        self.cut = true;
        self.shrink_mbs();
    }

    /// The bottleneck's rate from the first round's ACKs: the initial window leaves back to
    /// back, so its ACKs return spaced by the narrow link (packet-train dispersion). Needs
    /// two packets acknowledged after the first ACK (else the next round measures), within a
    /// quarter of the RTT (ACKs spread over the round trip were paced or clocked by something
    /// else and say nothing of the link); 0 when it cannot tell.
    fn measure_train(&mut self) {
        let r = &self.round;
        let span = r.last_ack.saturating_since(r.start).as_secs_f64();
        let bytes = r.acked_bytes as f64;
        if bytes < 2.0 * self.mss() {
            // Nothing to measure yet (a handshake's round, or a train cut short): the next
            // round tries.
            return;
        }
        self.train = if span > 0.0 && span <= r.min_rtt / 4.0 {
            bytes / span
        } else {
            0.0
        };
        self.train_measured = true;
    }

    fn update_cwnd(&mut self) {
        if self.rate > 0.0 && self.srtt > 0.0 {
            let w = self.cfg.cwnd_gain * self.rate * self.srtt / self.mss();
            self.cwnd = self.setup.clamp_cwnd(w.max(MIN_PIPE_PACKETS));
        }
    }
}

impl CongestionControl for Lion {
    fn name(&self) -> &'static str {
        "lion"
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        // An ACK of a packet sent after the round began closes it and opens the next one.
        let opens_round = ev.largest_acked >= self.round_end;
        if opens_round {
            if self.round_end != 0 {
                self.end_round(ev.now);
            }
            self.round_end = ev.next_packet.max(ev.largest_acked.saturating_add(1));
            self.round = RoundStats::new(ev.now);
        }
        if let Some(rtt) = ev.rtt {
            let s = rtt.as_secs_f64();
            self.note_foreign_rise(ev, s);
            self.last_rtt = s;
            self.base_rtt = self.base_rtt.min(s);
            self.round.min_rtt = self.round.min_rtt.min(s);
            self.round.max_rtt = self.round.max_rtt.max(s);
            self.srtt = if self.srtt == 0.0 {
                s
            } else {
                self.srtt + (s - self.srtt) / 8.0
            };
            if self.rate == 0.0 {
                // First RTT: start at the initial window per round trip.
                self.set_rate(self.setup.initial_cwnd * self.mss() / s.max(1e-6));
            }
        }
        if let Some(sample) = ev.rate {
            if let Some(r) = sample.bytes_per_sec() {
                if !sample.is_app_limited || r > self.round.max_rate {
                    self.round.max_rate = self.round.max_rate.max(r);
                }
                self.round.rate_samples = self.round.rate_samples.saturating_add(1);
                self.round.full_rate_samples = self
                    .round
                    .full_rate_samples
                    .saturating_add(u32::from(!sample.is_app_limited));
            }
        }
        self.round.cwnd_limited_acks = self
            .round
            .cwnd_limited_acks
            .saturating_add(u32::from(ev.cwnd_limited));
        if !opens_round {
            // The initial window's train ends at the first gap of more than an eighth of the
            // RTT (a loss, or the delayed-ACK timer after one), or with the first round.
            let gap = ev.now.saturating_since(self.round.last_ack).as_secs_f64();
            if !self.train_measured && gap > self.base_rtt / 8.0 {
                self.measure_train();
            }
            self.round.acked_bytes = self.round.acked_bytes.saturating_add(ev.acked_bytes);
            self.round.last_ack = ev.now;
        }
        self.update_cwnd();
    }

    fn on_loss(&mut self, ev: &LossEvent) {
        // While yielding or balancing the rate was just set on purpose; the queue those losses
        // come from is the one the yield is draining or the competitor keeps full.
        if matches!(self.phase, Phase::Balance | Phase::Yield { .. }) {
            return;
        }
        self.round.lost = self.round.lost.saturating_add(ev.lost_packets);
        // Before the first round ends the base RTT is not known, and a loss in the initial
        // window's train says the burst, not the rate, was too large.
        if !self.settled || !self.loss_is_congestion() {
            // Random as far as the rate is concerned; but a burst that met the cross traffic's
            // may have been dropped for its size alone, so the burst (not the rate) shrinks,
            // once per round.
            self.random_losses += 1;
            if !self.round.burst_cut_by_loss {
                self.round.burst_cut_by_loss = true;
                self.shrink_mbs();
            }
            return;
        }
        if !self.round.reduced_by_loss {
            self.round.reduced_by_loss = true;
            // The queue had reached the buffer's end: that is the effective queue.
            self.q_eff = self.recent_peak().max(MIN_QUEUE_SIGNAL);
            self.back_off(self.cfg.loss_decrease);
            self.mbs = self.mbs.min(self.mbs_cap()).max(1.0);
            if self.phase == Phase::Startup {
                self.phase = Phase::DropAvoidance;
            }
            self.update_cwnd();
        }
    }

    fn on_rto(&mut self, _ev: &RtoEvent) {
        if self.rate > 0.0 {
            self.set_rate(self.rate / 2.0);
        }
        self.mbs = self.cfg.mbs_initial;
        self.phase = Phase::Startup;
        self.floor = 0.0;
        self.unresponsive = false;
        self.capacity = 0.0;
        self.full = 0.0;
        self.drained = false;
        self.q_prev = None;
        self.update_cwnd();
    }

    fn cwnd(&self) -> f64 {
        self.cwnd
    }

    fn ssthresh(&self) -> f64 {
        INFINITE_SSTHRESH
    }

    fn pacing_rate(&self) -> Option<u64> {
        // At least 1 byte/s once set: an absurd RTT sample (hours per window) must not round the
        // rate to zero, which a transport would take as "never send again".
        (self.rate > 0.0).then_some((self.rate as u64).max(1))
    }

    fn max_burst(&self) -> Option<u32> {
        // Before the first RTT sample the initial window leaves as one train: its ACKs'
        // dispersion is the first estimate of the bottleneck's rate ([`Lion::measure_train`]).
        let burst = if self.rate == 0.0 {
            self.mbs.max(self.setup.initial_cwnd)
        } else {
            self.mbs
        };
        Some(burst.round().max(1.0) as u32)
    }

    fn phase(&self) -> &'static str {
        match self.phase {
            Phase::Startup => "startup",
            Phase::DropAvoidance => "drop_avoidance",
            Phase::Yield { .. } => "yield",
            Phase::Balance => "balance",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::RateSample;
    use crate::testkit::{loss, rto};
    use crate::CcSpec;
    use std::time::Duration;

    const MSS: u64 = 1448;
    /// Bytes/s in one Mb/s.
    const MBPS: f64 = 1e6 / 8.0;

    fn lion() -> Lion {
        Lion::new(Setup::default(), LionConfig::defaults())
    }

    fn rate(cc: &Lion) -> f64 {
        cc.pacing_rate().unwrap() as f64
    }

    /// Numbers packets, keeps time and builds delivery-rate samples for one sender.
    struct Path {
        now: Time,
        pn: u64,
        delivered: u64,
        /// Marks every rate sample application-limited.
        app_limited: bool,
    }

    impl Path {
        fn new() -> Path {
            Path {
                now: Time::ZERO,
                pn: 0,
                delivered: 0,
                app_limited: false,
            }
        }

        /// An ACK of one more packet, `largest` of the packet numbers, at `now`.
        fn ack(
            &mut self,
            now: Time,
            rtt: Option<f64>,
            largest: u64,
            next: u64,
            delivered: Option<f64>,
        ) -> AckEvent {
            self.delivered += MSS;
            AckEvent {
                now,
                acked_packets: 1,
                acked_bytes: MSS,
                rtt: rtt.map(Duration::from_secs_f64),
                prior_bytes_in_flight: 0,
                bytes_in_flight: 0,
                in_flight_at_send: 0,
                largest_acked: largest,
                next_packet: next,
                rate: delivered.map(|d| RateSample {
                    delivered: self.delivered,
                    prior_delivered: self.delivered.saturating_sub(10 * MSS),
                    interval: Duration::from_secs_f64(10.0 * MSS as f64 / d),
                    is_app_limited: self.app_limited,
                }),
                in_recovery: false,
                cwnd_limited: true,
            }
        }

        /// The first `count` of a round's 50 ACKs, spread over `rtt`, each with a
        /// delivery-rate sample of `delivered` bytes/s and an RTT sample of `rtt`, plus
        /// `jitter` on every other ACK (the transient queue of a burst). The 50th, without
        /// samples, acknowledges the first packet sent in the round, so Lion evaluates the
        /// round before it returns.
        fn acks(&mut self, cc: &mut Lion, rtt: f64, jitter: f64, delivered: f64, count: u64) {
            let sample = |i: u64| rtt + if i % 2 == 0 { jitter } else { 0.0 };
            self.acks_with(cc, rtt, &sample, delivered, count);
        }

        /// [`Path::acks`] with the `i`-th ACK's RTT sample `sample(i)` (i from 1).
        fn acks_with(
            &mut self,
            cc: &mut Lion,
            rtt: f64,
            sample: &dyn Fn(u64) -> f64,
            delivered: f64,
            count: u64,
        ) {
            const ACKS: u64 = 50;
            for i in 1..=count.min(ACKS) {
                let closing = i == ACKS;
                let this_rtt = sample(i);
                let now = self.now + Duration::from_secs_f64(rtt * i as f64 / ACKS as f64);
                let next = self.pn + if closing { 2 * ACKS } else { ACKS };
                let (rtt, rate) = if closing {
                    (None, None)
                } else {
                    (Some(this_rtt), Some(delivered))
                };
                let ev = self.ack(now, rtt, self.pn + i, next, rate);
                cc.on_ack(&ev);
            }
        }

        /// One round trip: the 50 ACKs of [`Path::acks`]; time and packet numbers move on.
        fn round_jitter(&mut self, cc: &mut Lion, rtt: f64, jitter: f64, delivered: f64) {
            self.acks(cc, rtt, jitter, delivered, 50);
            self.now += Duration::from_secs_f64(rtt);
            self.pn += 50;
        }

        fn round(&mut self, cc: &mut Lion, rtt: f64, delivered: f64) {
            self.round_jitter(cc, rtt, 0.0, delivered);
        }

        /// The first round of a connection whose initial window of `packets` left back to
        /// back: their ACKs come `MSS / link` apart, then the round's closing ACK one RTT
        /// after the first.
        fn train(&mut self, cc: &mut Lion, rtt: f64, packets: u64, link: f64) {
            let start = self.now;
            for i in 1..=packets {
                let now = start + Duration::from_secs_f64(rtt + (i - 1) as f64 * MSS as f64 / link);
                let ev = self.ack(now, Some(rtt), self.pn + i, self.pn + packets + 1, None);
                cc.on_ack(&ev);
            }
            self.now = start + Duration::from_secs_f64(rtt + packets as f64 * MSS as f64 / link);
            self.pn += packets;
        }

        /// The first 25 of a round's 50 ACKs, without samples of queueing.
        fn half_round(&mut self, cc: &mut Lion, rtt: f64, delivered: f64) {
            self.acks(cc, rtt, 0.0, delivered, 25);
        }
    }

    /// A fluid FIFO bottleneck: `capacity` bytes/s, propagation RTT `base`, a buffer of
    /// `buffer` seconds. Per round the queue grows by (arrivals − capacity)·RTT; while a queue
    /// exists each sender's share of the output is its share of the arrivals. The RTT of a round
    /// reflects the queue at its start: a sender learns of a queue one round after building it.
    struct Bottleneck {
        capacity: f64,
        base: f64,
        buffer: f64,
        queue: f64,
        path: Path,
    }

    impl Bottleneck {
        fn new(capacity: f64, base: f64) -> Bottleneck {
            Bottleneck {
                capacity,
                base,
                buffer: 0.1,
                queue: 0.0,
                path: Path::new(),
            }
        }

        /// One round trip of Lion with `cross` bytes/s of other traffic. Returns Lion's delivered
        /// rate and whether the buffer overflowed (Lion is then told of one loss).
        fn round(&mut self, cc: &mut Lion, cross: f64) -> (f64, bool) {
            let rtt = self.base + self.queue / self.capacity;
            // Before the first RTT sample Lion has no rate: it sends its initial window.
            let ours = cc
                .pacing_rate()
                .map_or(10.0 * 1448.0 / self.base, |r| r as f64);
            let arrival = ours + cross;
            let delivered = if self.queue > 0.0 || arrival > self.capacity {
                self.capacity * ours / arrival
            } else {
                ours
            };
            self.queue = (self.queue + (arrival - self.capacity) * rtt).max(0.0);
            self.path.round(cc, rtt, delivered);
            let overflow = self.queue > self.buffer * self.capacity;
            if overflow {
                self.queue = self.buffer * self.capacity;
                cc.on_loss(&loss(true));
            }
            (delivered, overflow)
        }

        fn queue_delay(&self) -> f64 {
            self.queue / self.capacity
        }
    }

    #[test]
    fn burst_doubles_without_queueing_then_grows_by_steps() {
        let mut cc = lion();
        let mut path = Path::new();
        // A 1 Gb/s path: an eighth of queue_threshold (125 µs) at its rate is 10.8 packets,
        // startup's largest burst; half of it (0.5 ms), 43 packets, is drop avoidance's
        // before a loss teaches the effective queue.
        path.round(&mut cc, 0.080, 1000.0 * MBPS);
        // The first RTT sets the rate to 10 packets per 80 ms; the first round then doubles it.
        assert!((rate(&cc) - 2.0 * 10.0 * 1448.0 / 0.080).abs() < 2.0);
        assert_eq!(cc.max_burst(), Some(8));
        for _ in 0..4 {
            path.round(&mut cc, 0.080, 1000.0 * MBPS);
            assert_eq!(cc.max_burst(), Some(11));
            assert_eq!(cc.phase(), "startup");
        }
        // 5 ms of queueing: startup ends, the burst stops doubling, the rate drains the queue.
        let avail = rate(&cc);
        path.round(&mut cc, 0.085, avail);
        assert_eq!((cc.max_burst(), cc.phase()), (Some(11), "drop_avoidance"));
        let drained = rate(&cc);
        assert!((drained - avail * 80.0 / 85.0).abs() < 2.0);
        // Clear again: the rate returns to the available bandwidth measured while the queue
        // stood (the burst is at its cap).
        path.round(&mut cc, 0.080, drained);
        assert!((rate(&cc) - avail).abs() < 2.0);
        // Clear, delivered in full and at the available bandwidth, which is the rate the
        // bottleneck was full at: probe a quarter step (1.25 %) above it.
        path.round(&mut cc, 0.080, avail);
        assert!((rate(&cc) - 1.0125 * avail).abs() < 2.0);
        // Delivered well short of what we send (the last rounds have not answered): the probe
        // starts from the available bandwidth, not from our rate.
        let (r, abw) = (rate(&cc), cc.available_bandwidth());
        path.round(&mut cc, 0.080, 0.9 * r);
        assert!(
            (rate(&cc) - (abw + 0.0125 * r)).abs() < 2.0,
            "{} vs {}",
            rate(&cc),
            abw
        );
        // The path delivers more than it did full (another flow left): back to what it
        // delivers, then full steps again.
        path.round(&mut cc, 0.080, 1.02 * avail);
        assert!((rate(&cc) - 1.02 * avail).abs() < 2.0);
        path.round(&mut cc, 0.080, 1.02 * avail);
        assert!((rate(&cc) - 1.05 * 1.02 * avail).abs() < 2.0);
        // Bursts that queue 3 ms and drain within the round shrink the burst by a quarter.
        let (r, burst) = (rate(&cc), cc.mbs());
        path.round_jitter(&mut cc, 0.080, 0.003, r);
        assert!((cc.mbs() - burst * 0.75).abs() < 1e-9);
    }

    #[test]
    fn a_drain_empties_the_queue_in_one_round_and_the_next_round_sends_what_is_delivered() {
        let mut cc = lion();
        let mut path = Path::new();
        for _ in 0..5 {
            path.round(&mut cc, 0.080, 1000.0 * MBPS);
        }
        // 5 ms of queue ends startup with a drain.
        let avail = rate(&cc);
        path.round(&mut cc, 0.085, avail);
        assert!((rate(&cc) - avail * 80.0 / 85.0).abs() < 2.0);
        // The next round still shows 4 ms of it: its packets left before the drain took
        // effect. Draining again would idle the link; it sends what the path delivers.
        path.round(&mut cc, 0.084, avail);
        assert!((rate(&cc) - avail).abs() < 2.0, "{} vs {avail}", rate(&cc));
        // A queue still there a round later stands: drain it.
        path.round(&mut cc, 0.084, avail);
        assert!((rate(&cc) - avail * 80.0 / 84.0).abs() < 2.0);
        path.round(&mut cc, 0.083, avail);
        assert!((rate(&cc) - avail).abs() < 2.0);
    }

    #[test]
    fn startup_burst_growth_slows_when_bursts_queue() {
        // The first round's train queues 2 ms and drains within the round, no standing
        // queue: the rate still doubles, the burst only grows by a step. (In later rounds a
        // queue that large is cross traffic's, and ends startup: the next test.)
        let mut cc = lion();
        let mut path = Path::new();
        path.round_jitter(&mut cc, 0.080, 0.002, 1000.0 * MBPS);
        assert_eq!((cc.max_burst(), cc.phase()), (Some(5), "startup"));
        let mut clear = lion();
        Path::new().round(&mut clear, 0.080, 1000.0 * MBPS);
        assert_eq!((clear.max_burst(), rate(&clear)), (Some(8), rate(&cc)));
    }

    #[test]
    fn cross_traffics_bursts_end_startup_without_a_cut_but_the_first_trains_do_not() {
        let mut cc = lion();
        let mut path = Path::new();
        // The first round's 2 ms peak is the initial window's own train: startup goes on.
        path.round_jitter(&mut cc, 0.080, 0.002, 1000.0 * MBPS);
        assert_eq!(cc.phase(), "startup");
        path.round(&mut cc, 0.080, 1000.0 * MBPS);
        assert_eq!((cc.max_burst(), cc.phase()), (Some(10), "startup"));
        // A later round peaks 0.5 ms above its base: one of our 10-packet bursts explains
        // 0.12 ms, so other traffic's bursts queued at moments. Startup ends at this rate,
        // neither doubled nor cut.
        let r = rate(&cc);
        path.round_jitter(&mut cc, 0.080, 0.0005, 1000.0 * MBPS);
        assert_eq!(cc.phase(), "drop_avoidance");
        assert!((rate(&cc) - r).abs() < 2.0, "{} vs {r}", rate(&cc));
    }

    #[test]
    fn random_loss_keeps_the_rate_and_loss_at_the_queues_end_reduces_it() {
        let mut cc = lion();
        let mut path = Path::new();
        // A 100 Mb/s path: one of our 4-packet bursts queues 0.46 ms at most.
        path.round(&mut cc, 0.080, 100.0 * MBPS);
        let r = rate(&cc);
        path.round(&mut cc, 0.085, r);
        let r = rate(&cc);
        path.round(&mut cc, 0.080, r);
        assert_eq!(cc.phase(), "drop_avoidance");
        // No queue in the last round: an isolated loss is random. The rate stays; the burst
        // shrinks by a quarter, once in the round.
        let (before, burst) = (rate(&cc), cc.mbs());
        cc.on_loss(&loss(true));
        assert_eq!(rate(&cc), before);
        assert!((cc.mbs() - (0.75 * burst).max(1.0)).abs() < 1e-9);
        cc.on_loss(&loss(true));
        assert_eq!(rate(&cc), before);
        assert_eq!(cc.random_losses(), 2);
        assert_eq!(cc.effective_queue(), None);
        // A round whose queue reached 2 ms within it (bursts of the cross traffic) and 90 % of
        // our rate delivered: the next loss is congestion. The rate drops to
        // 0.85 × min(rate, abw), and 2 ms becomes the effective queue.
        let r = rate(&cc);
        path.round_jitter(&mut cc, 0.080, 0.002, 0.9 * r);
        let (held, abw) = (rate(&cc), cc.available_bandwidth());
        cc.on_loss(&loss(true));
        assert!(
            (rate(&cc) - 0.85 * held.min(abw)).abs() < 2.0,
            "{} vs 0.85 × min({held}, {abw})",
            rate(&cc)
        );
        assert!((cc.effective_queue().unwrap() - 0.002).abs() < 1e-6);
        // Once per round: a second loss in the same round changes nothing more.
        let after = rate(&cc);
        cc.on_loss(&loss(true));
        assert_eq!(rate(&cc), after);
        assert_eq!(cc.random_losses(), 2);
    }

    #[test]
    fn a_loss_before_the_first_round_ends_is_the_bursts_not_the_rates() {
        let mut cc = lion();
        let mut path = Path::new();
        // The initial window's train is still in flight: its base RTT is not known yet.
        cc.on_loss(&loss(true));
        assert_eq!((cc.phase(), cc.random_losses()), ("startup", 1));
        path.round(&mut cc, 0.080, 1000.0 * MBPS);
        assert_eq!(cc.phase(), "startup");
        assert_eq!(cc.effective_queue(), None);
    }

    #[test]
    fn the_effective_queue_sets_the_thresholds_the_burst_and_the_step() {
        let mut cc = lion();
        let mut path = Path::new();
        path.round(&mut cc, 0.040, 100.0 * MBPS);
        let r = rate(&cc);
        path.round(&mut cc, 0.045, r);
        for _ in 0..3 {
            let r = rate(&cc);
            path.round(&mut cc, 0.040, r);
        }
        // A loss with the queue at 0.8 ms (a 7-packet buffer at 100 Mb/s).
        let r = rate(&cc);
        path.round_jitter(&mut cc, 0.040, 0.0008, r);
        cc.on_loss(&loss(true));
        assert!((cc.effective_queue().unwrap() - 0.0008).abs() < 1e-6);
        // The burst fits well inside that queue: 0.35 · 0.8 ms / 2 at 100 Mb/s is 1.2
        // packets.
        assert!(cc.mbs() <= 1.21, "burst {}", cc.mbs());
        // A clear round now probes by at most 1/16 of the effective queue per round trip.
        let r = rate(&cc);
        path.round(&mut cc, 0.040, r);
        let r2 = rate(&cc);
        path.round(&mut cc, 0.040, r2);
        let step = rate(&cc) - r2;
        let cap = 0.0008 * 100.0 * MBPS / (16.0 * 0.040);
        assert!(
            step > 0.0 && step <= cap.max(1448.0 / 0.040) + 1.0,
            "{step} vs {cap}"
        );
        assert!(r > 0.0);
        // A round whose queue reached 0.35 of it (0.28 ms, plus our burst) warns: the rate
        // steps back before anything is lost.
        let before = rate(&cc);
        path.round_jitter(&mut cc, 0.040, 0.0005, before);
        assert!(rate(&cc) < before, "{} vs {before}", rate(&cc));
        // Below the warning level a loss is random: the queue did not reach the buffer's end.
        let random = cc.random_losses();
        let r = rate(&cc);
        path.round(&mut cc, 0.040, r);
        let r = rate(&cc);
        path.round(&mut cc, 0.040, r);
        let held = rate(&cc);
        cc.on_loss(&loss(true));
        assert_eq!((rate(&cc), cc.random_losses()), (held, random + 1));
    }

    /// Lion on 100 Mb/s, 40 ms, settled in drop avoidance after a loss taught it an
    /// effective queue of 4 ms (its warning level 1.4 ms), at a steady rate.
    fn taught_a_4ms_queue() -> (Lion, Path) {
        let mut cc = lion();
        let mut path = Path::new();
        path.round(&mut cc, 0.040, 100.0 * MBPS);
        for _ in 0..4 {
            let r = rate(&cc);
            path.round(&mut cc, 0.040, r);
        }
        let r = rate(&cc);
        path.round_jitter(&mut cc, 0.040, 0.004, r);
        cc.on_loss(&loss(true));
        assert!((cc.effective_queue().unwrap() - 0.004).abs() < 1e-6);
        for _ in 0..3 {
            let r = rate(&cc);
            path.round(&mut cc, 0.040, r);
        }
        assert_eq!(cc.phase(), "drop_avoidance");
        (cc, path)
    }

    #[test]
    fn a_peak_that_other_traffic_builds_faster_than_the_link_drains_does_not_cut_the_rate() {
        // The same 2.5 ms peak (above the 1.4 ms warning level) reached two ways. Built by our
        // own rate, it rises a little per sample (0.1 ms, under one packet at 100 Mb/s beyond
        // our own bytes): Lion steps back before the buffer overflows.
        let (mut cc, mut path) = taught_a_4ms_queue();
        let before = rate(&cc);
        let ramp = |i: u64| 0.040 + (0.0001 * i as f64).min(0.0025);
        path.acks_with(&mut cc, 0.040, &ramp, before, 50);
        assert!(rate(&cc) < before, "{} vs {before}", rate(&cc));
        // Built by a queue that rises by more than four packets between our samples but more
        // slowly than the link drains (samples 4 ms apart, 0.9 ms of rise each: traffic a
        // little above the link's rate, ours included), it is a queue our rate helps build:
        // Lion steps back.
        let (mut cc, mut path) = taught_a_4ms_queue();
        let before = rate(&cc);
        let slow = |i: u64| 0.040 + (0.0009 * i as f64).min(0.0025);
        path.acks_with(&mut cc, 0.200, &slow, before, 50);
        assert!(rate(&cc) < before, "{} vs {before}", rate(&cc));
        // Built by another host's burst arriving faster than the link drains it, it appears
        // between two of our samples (2.5 ms in 0.8 ms): our rate did not build it and a
        // lower one would not prevent it, so the rate holds; the next clear round probes on.
        let (mut cc, mut path) = taught_a_4ms_queue();
        let before = rate(&cc);
        let jump = |i: u64| if (20..25).contains(&i) { 0.0425 } else { 0.040 };
        path.acks_with(&mut cc, 0.040, &jump, before, 50);
        path.now += Duration::from_secs_f64(0.040);
        path.pn += 50;
        assert_eq!(rate(&cc), before);
        path.round(&mut cc, 0.040, before);
        assert!(rate(&cc) > before, "{} vs {before}", rate(&cc));
    }

    #[test]
    fn a_foreign_burst_is_a_rise_of_more_than_four_packets_beyond_our_own() {
        // At 100 Mb/s a packet is 0.116 ms. Rises of 3.5 packets beyond the ACK's own bytes
        // between samples 0.8 ms apart (faster than the link drains) do not make a foreign
        // burst: the warning they reach steps the rate back. Rises of 4.5 packets do: it holds.
        let packet = MSS as f64 / (100.0 * MBPS);
        for (packets, holds) in [(3.5, false), (4.5, true)] {
            let (mut cc, mut path) = taught_a_4ms_queue();
            let before = rate(&cc);
            let grew = (packets + 1.0) * packet;
            let steps = |i: u64| {
                0.040
                    + if i >= 20 {
                        (grew * (i - 19) as f64).min(6.0 * grew)
                    } else {
                        0.0
                    }
            };
            path.acks_with(&mut cc, 0.040, &steps, before, 50);
            assert_eq!(
                rate(&cc) >= before,
                holds,
                "{packets} packets: {} vs {before}",
                rate(&cc)
            );
        }
    }

    #[test]
    fn a_loss_late_in_a_round_leaves_the_next_rounds_delivery_out_of_the_estimate() {
        // A congestion loss near the end of a round cuts the rate; the next round's ACKs still
        // acknowledge what left at the old rate. That round's delivery must not lift the
        // available bandwidth back to the old rate, or the next clear round returns to it.
        let (mut cc, mut path) = taught_a_4ms_queue();
        let old = rate(&cc);
        path.acks(&mut cc, 0.040, 0.0025, old, 49);
        cc.on_loss(&loss(true));
        let cut = rate(&cc);
        assert!(cut < 0.9 * old, "{cut} vs {old}");
        let close = path.ack(
            path.now + Duration::from_secs_f64(0.040),
            None,
            path.pn + 50,
            path.pn + 100,
            None,
        );
        cc.on_ack(&close);
        path.now += Duration::from_secs_f64(0.040);
        path.pn += 50;
        path.round(&mut cc, 0.040, old);
        path.round(&mut cc, 0.040, cut);
        assert!(
            rate(&cc) < 0.95 * old,
            "{} vs {old} (cut to {cut})",
            rate(&cc)
        );
    }

    #[test]
    fn the_initial_windows_train_caps_startup_at_half_the_link() {
        let mut cc = lion();
        let mut path = Path::new();
        // Ten packets back to back, their ACKs 0.116 ms apart: a 100 Mb/s bottleneck.
        assert_eq!(cc.max_burst(), Some(10));
        path.train(&mut cc, 0.040, 10, 100.0 * MBPS);
        // The round ends with the next ACK: the train's rate is known.
        let r = rate(&cc);
        path.round(&mut cc, 0.040, r);
        let train = cc.path_rate();
        assert!(
            (train - 100.0 * MBPS).abs() < 0.01 * 100.0 * MBPS,
            "{train}"
        );
        // Startup doubles until the next doubling would pass half of it, and stops there.
        let mut rounds = 0;
        while cc.phase() == "startup" {
            let r = rate(&cc);
            path.round(&mut cc, 0.040, r);
            rounds += 1;
            assert!(rounds < 20);
        }
        assert!(
            (rate(&cc) - 50.0 * MBPS).abs() < 0.01 * 50.0 * MBPS,
            "{}",
            rate(&cc)
        );
    }

    /// `rounds` rounds whose ACKs carry delivery-rate samples 1 % under the rate of the round
    /// before (what its ACKs acknowledge; pacing gaps keep samples a little under the rate);
    /// the rates after each.
    fn lagged_rounds(cc: &mut Lion, path: &mut Path, rounds: usize) -> Vec<f64> {
        let mut rates = vec![rate(cc)];
        for _ in 0..rounds {
            let answered = 0.99 * rates[rates.len().saturating_sub(2)];
            path.round(cc, 0.040, answered);
            rates.push(rate(cc));
        }
        rates
    }

    /// A 1 Gb/s initial train, a clear round, then a round whose every other sample queues
    /// `peak` seconds.
    fn train_then_peak(peak: f64) -> (Lion, Path) {
        let mut cc = lion();
        let mut path = Path::new();
        path.train(&mut cc, 0.040, 10, 1000.0 * MBPS);
        let r = rate(&cc);
        path.round(&mut cc, 0.040, r);
        let r = rate(&cc);
        path.round_jitter(&mut cc, 0.040, peak, r);
        (cc, path)
    }

    #[test]
    fn below_half_the_link_a_probe_step_does_not_wait_for_its_answer() {
        // A 1 Gb/s train, then a round whose peak queues 1 ms beyond our bursts: startup
        // ends at a few Mb/s (a jittery path looks like this).
        let (mut cc, mut path) = train_then_peak(0.0015);
        assert_eq!(cc.phase(), "drop_avoidance");
        let start = rate(&cc);
        assert!(start < 100.0 * MBPS, "{start}");
        // Below half the link the round is held to the rate before the last step: probing
        // steps every round, by probe_gain (5 %) or a packet per base RTT.
        let rates = lagged_rounds(&mut cc, &mut path, 20);
        for w in rates.windows(2) {
            assert!(w[1] >= w[0] * 1.049, "{rates:?}");
        }
        // So after a congestion loss, the effective queue known (4 ms: steps of up to 0.78 MB/s
        // per round, more than 5 % of these rates).
        let (mut cc, mut path) = train_then_peak(0.004);
        cc.on_loss(&loss(true));
        assert!(cc.effective_queue().is_some_and(|q| q > 0.0039));
        let rates = lagged_rounds(&mut cc, &mut path, 12);
        assert!(rates[12] < 50.0 * MBPS, "{rates:?}");
        for w in rates[2..].windows(2) {
            assert!(w[1] >= w[0] * 1.049, "{rates:?}");
        }
        // Above half the link a step waits for its answer: the rate rises every other round.
        let mut cc = lion();
        let mut path = Path::new();
        path.train(&mut cc, 0.040, 10, 100.0 * MBPS);
        while cc.phase() == "startup" {
            let r = rate(&cc);
            path.round(&mut cc, 0.040, r);
        }
        let rates = lagged_rounds(&mut cc, &mut path, 20);
        let (last, first) = (rates[20], rates[0]);
        assert!(last > first && last < first * 1.05f64.powi(11), "{rates:?}");
    }

    #[test]
    fn many_losses_in_a_round_are_congestion_whatever_the_delays_say() {
        let mut cc = lion();
        let mut path = Path::new();
        path.round(&mut cc, 0.080, 1.0 * MBPS);
        let r = rate(&cc);
        path.round(&mut cc, 0.085, r);
        for _ in 0..2 {
            let r = rate(&cc);
            path.round(&mut cc, 0.080, r);
        }
        // Half way through a round of 50 ACKs without any queue, four losses among 25
        // packets: 16 %, no random loss Lion tolerates.
        let before = rate(&cc);
        path.half_round(&mut cc, 0.080, before);
        for _ in 0..3 {
            cc.on_loss(&loss(true));
            assert_eq!(rate(&cc), before);
        }
        cc.on_loss(&loss(true));
        assert!(rate(&cc) < before);
    }

    #[test]
    fn shuffle_table_rows() {
        let m = 1e6;
        let rows = [
            (999.0, 200.0),
            (500.0, 200.0),
            (499.0, 100.0),
            (150.0, 100.0),
            (149.0, 50.0),
            (100.0, 50.0),
            (99.0, 20.0),
            (50.0, 20.0),
            (49.0, 10.0),
            (15.0, 10.0),
            (14.0, 5.0),
            (10.0, 5.0),
            (1.2, 0.5),
            (1000.0, 500.0),
            (1499.0, 500.0),
            (1500.0, 1000.0),
            (4999.0, 1000.0),
            (5000.0, 2000.0),
            (9999.0, 2000.0),
            (10_000.0, 5000.0),
            (40_000.0, 10_000.0),
            (100_000.0, 50_000.0),
        ];
        for (mbps, yields) in rows {
            assert_eq!(shuffle_yield(mbps * m), yields * m, "{mbps} Mb/s");
        }
        assert_eq!(shuffle_yield(0.5), 0.0);
        assert_eq!(shuffle_yield(f64::NAN), 0.0);
    }

    /// Lion alone on 1 Gb/s, 80 ms, long enough to leave startup and settle.
    fn settled() -> (Lion, Bottleneck) {
        let mut cc = lion();
        let mut link = Bottleneck::new(1000.0 * MBPS, 0.080);
        for _ in 0..60 {
            link.round(&mut cc, 0.0);
        }
        assert_eq!(cc.phase(), "drop_avoidance");
        (cc, link)
    }

    #[test]
    fn alone_it_paces_near_capacity_with_little_queue() {
        let (mut cc, mut link) = settled();
        let (mut delivered, mut max_queue, mut overflows) = (0.0, 0.0f64, 0);
        for _ in 0..40 {
            let (d, overflow) = link.round(&mut cc, 0.0);
            delivered += d / 40.0;
            max_queue = max_queue.max(link.queue_delay());
            overflows += overflow as u32;
        }
        assert!(delivered > 0.9 * link.capacity, "{}", delivered / MBPS);
        assert!(max_queue < 0.25 * link.base, "queue {max_queue} s");
        assert_eq!((overflows, cc.random_losses()), (0, 0));
    }

    /// Runs Lion alone until a round in which it saw no queue, so that a newcomer arrives
    /// while Lion's rate is steady.
    fn wait_for_empty_queue(cc: &mut Lion, link: &mut Bottleneck) {
        for _ in 0..20 {
            if link.queue == 0.0 && cc.q_prev == Some(0.0) {
                return;
            }
            link.round(cc, 0.0);
        }
        panic!("queue never empties");
    }

    /// Lion settled alone, then 500 Mb/s of new traffic for two rounds: the first builds a
    /// queue, the second shows it. Returns Lion's rate before the yield.
    fn newcomer_arrives(cc: &mut Lion, link: &mut Bottleneck) -> f64 {
        wait_for_empty_queue(cc, link);
        link.round(cc, 500.0 * MBPS);
        let before = rate(cc);
        link.round(cc, 500.0 * MBPS);
        before
    }

    #[test]
    fn new_traffic_gets_the_table_yield_and_a_lion_newcomer_is_left_alone() {
        let (mut cc, mut link) = settled();
        let before = newcomer_arrives(&mut cc, &mut link);
        assert_eq!(cc.phase(), "yield");
        let expect = before - shuffle_yield(before * 8.0) / 8.0;
        assert!(
            (rate(&cc) - expect).abs() < 1.0,
            "{} → {}",
            before / MBPS,
            rate(&cc) / MBPS
        );
        // A newcomer that keeps only what was yielded lets the queue drain: no balancing.
        let newcomer = before - rate(&cc);
        let mut phases = vec![];
        for _ in 0..10 {
            link.round(&mut cc, newcomer);
            phases.push(cc.phase());
        }
        assert!(!phases.contains(&"balance"), "{phases:?}");
        assert_eq!(cc.phase(), "drop_avoidance");
        assert_eq!(cc.floor, 0.0);
    }

    #[test]
    fn an_application_limited_shortfall_is_not_new_traffic() {
        let (mut cc, mut link) = settled();
        wait_for_empty_queue(&mut cc, &mut link);
        // The application sent only half the pacing rate while the delay rose 3 ms: no yield.
        let r = rate(&cc);
        link.path.app_limited = true;
        link.path.round(&mut cc, 0.083, 0.5 * r);
        assert_eq!(cc.phase(), "drop_avoidance");
        assert!(
            rate(&cc) > 0.4 * r,
            "the drain rule still applies, the table does not"
        );
    }

    #[test]
    fn balance_raises_the_rate_back_when_the_competitor_keeps_growing() {
        let (mut cc, mut link) = settled();
        newcomer_arrives(&mut cc, &mut link);
        assert_eq!(cc.phase(), "yield");
        let yielded = rate(&cc);
        let fair = 0.5 * cc.path_rate();
        // The newcomer grabs the room like a loss-based flow: it doubles every round up to the
        // link rate (slow start) until the buffer overflows, then halves and adds a packet per
        // round trip (congestion avoidance), halving again at every overflow.
        let mut cross = 500.0 * MBPS;
        let mut trace = vec![];
        for _ in 0..40 {
            cross = (cross * 2.0).min(link.capacity);
            let (delivered, overflow) = link.round(&mut cc, cross);
            if overflow {
                cross /= 2.0;
            }
            trace.push((cc.phase(), rate(&cc), delivered));
        }
        let start = trace
            .iter()
            .position(|t| t.0 == "balance")
            .expect("balances");
        let end = start
            + trace[start..]
                .iter()
                .position(|t| t.0 != "balance")
                .unwrap();
        // While balancing the rate rises by 10 % per round, up to the capacity seen.
        for pair in trace[start..end].windows(2) {
            let expect = (pair[0].1 * 1.1).min(cc.path_rate());
            assert!((pair[1].1 - expect).abs() < 2.0, "{trace:?}");
        }
        assert!(end - start >= 2, "{trace:?}");
        assert!(trace[end - 1].1 > yielded, "{trace:?}");
        // It stops once Lion delivers its fair share, which is then its floor.
        assert!(trace[end - 1].2 < fair && trace[end].2 >= fair, "{trace:?}");
        assert_eq!(cc.floor, fair);
        assert!(trace[end..].iter().all(|t| t.1 >= fair - 1.0), "{trace:?}");
    }

    #[test]
    fn a_competitor_that_holds_the_queue_from_the_start_is_balanced() {
        let (mut cc, mut link) = settled();
        wait_for_empty_queue(&mut cc, &mut link);
        // A loss-based flow in congestion avoidance: it sends what keeps 4 ms queued, whatever
        // Lion does; Lion's draining only hands it the room.
        let target = 0.004 * link.capacity;
        let mut phases = vec![];
        for _ in 0..40 {
            let ours = cc.pacing_rate().unwrap() as f64;
            let rtt = link.base + link.queue_delay();
            let cross = (link.capacity - ours + (target - link.queue) / rtt).max(0.0);
            link.round(&mut cc, cross);
            phases.push(cc.phase());
        }
        let first = phases.iter().position(|p| *p == "balance");
        // More than 2 · yield_rounds rounds of standing queue first, then balancing to the
        // fair share, which is kept.
        assert!(first.is_some_and(|i| i > 8), "{phases:?}");
        let fair = 0.5 * cc.path_rate();
        assert_eq!(cc.floor, fair);
        assert!(rate(&cc) >= fair - 1.0, "{} Mb/s", rate(&cc) / MBPS);
    }

    #[test]
    fn a_floor_the_buffer_overflows_at_round_after_round_is_given_up() {
        // Balanced against a competitor that held the queue (above), Lion keeps its fair
        // share as a floor: a loss-based flow backs off after it overflows the buffer.
        let (mut cc, mut link) = settled();
        wait_for_empty_queue(&mut cc, &mut link);
        let target = 0.004 * link.capacity;
        for _ in 0..40 {
            let ours = cc.pacing_rate().unwrap() as f64;
            let rtt = link.base + link.queue_delay();
            let cross = (link.capacity - ours + (target - link.queue) / rtt).max(0.0);
            link.round(&mut cc, cross);
        }
        let fair = 0.5 * cc.path_rate();
        assert_eq!(cc.floor, fair);
        // Then the traffic beside it turns unresponsive at 60 % of the link: at the floor (half
        // the link) the buffer overflows every round and nothing backs off. After
        // yield_rounds (4) such rounds the floor goes, Lion drains, settles in the 40 % left
        // and does not balance again.
        let mut trace = vec![];
        for _ in 0..60 {
            let (_, overflow) = link.round(&mut cc, 0.6 * link.capacity);
            trace.push((cc.phase(), rate(&cc) / MBPS, overflow, cc.floor));
        }
        let released = trace
            .iter()
            .position(|t| t.3 == 0.0)
            .unwrap_or_else(|| panic!("floor kept: {trace:?}"));
        assert!(
            released >= 3 && trace[released - 3..=released].iter().all(|t| t.2),
            "{trace:?}"
        );
        assert!(
            trace[released..]
                .iter()
                .all(|t| t.0 != "balance" && t.3 == 0.0),
            "{trace:?}"
        );
        let overflows = trace.iter().filter(|t| t.2).count();
        assert!(
            overflows <= released + 3,
            "{overflows} overflows: {trace:?}"
        );
        assert!(!trace[trace.len() - 10..].iter().any(|t| t.2), "{trace:?}");
        // Probing above the 40 % left and draining back, its mean rate is what is left: a
        // mean above it by more than the buffer's worth over the rounds would overflow.
        let last = &trace[trace.len() - 20..];
        let mean = last.iter().map(|t| t.1).sum::<f64>() / last.len() as f64;
        assert!(mean <= 0.41 * link.capacity / MBPS, "{mean}: {trace:?}");
    }

    #[test]
    fn window_caps_at_twice_rate_times_rtt() {
        let (mut cc, mut link) = settled();
        link.round(&mut cc, 0.0);
        let expect = 2.0 * rate(&cc) * cc.srtt / 1448.0;
        assert!((cc.cwnd() - expect).abs() < 1e-6 * expect);
        assert!(cc.cwnd() > 2.0 * 0.8 * link.capacity * 0.080 / 1448.0);
    }

    #[test]
    fn timeout_halves_the_rate_and_restarts_the_burst() {
        let (mut cc, _) = settled();
        let r = rate(&cc);
        cc.on_rto(&rto(1));
        assert!((rate(&cc) - r / 2.0).abs() < 1.0);
        assert_eq!((cc.max_burst(), cc.phase()), (Some(4), "startup"));
    }

    #[test]
    fn parameter_checks() {
        let cc = "lion"
            .parse::<CcSpec>()
            .unwrap()
            .build(&Setup::default())
            .unwrap();
        assert_eq!(
            (cc.name(), cc.phase(), cc.pacing_rate()),
            ("lion", "startup", None)
        );
        // Before the first RTT sample the initial window leaves as one train.
        assert_eq!(cc.max_burst(), Some(10));
        let e = "lion:mbs_initial=64,mbs_max=32"
            .parse::<CcSpec>()
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("mbs_initial (64) must not exceed mbs_max (32)"),
            "{e}"
        );
        let e = "lion:probe_gain=0.3".parse::<CcSpec>().unwrap_err();
        assert!(
            e.to_string()
                .contains("compete_drop (0.2) must exceed probe_gain"),
            "{e}"
        );
        assert!("lion:yield_rounds=2.5".parse::<CcSpec>().is_err());
    }

    #[test]
    fn byte_and_packet_counters_at_the_top_of_their_range_do_not_overflow() {
        let mut cc = lion();
        let top = AckEvent {
            acked_bytes: u64::MAX,
            largest_acked: u64::MAX,
            rtt: Some(Duration::from_millis(100)),
            ..crate::testkit::ack(1)
        };
        cc.on_ack(&top);
        // The first RTT sample sets the rate to the initial window per RTT: 10 · 1448 / 0.1 s.
        assert_eq!(cc.pacing_rate(), Some(144_800));
        // The round ends at packet u64::MAX, so the next ACK of it closes a clear, window-limited
        // startup round: the rate doubles.
        cc.on_ack(&top);
        assert_eq!(cc.pacing_rate(), Some(289_600));
    }

    #[test]
    fn startup_without_a_queue_stops_doubling_at_the_largest_window_per_rtt() {
        let mut cc = lion();
        let mut path = Path::new();
        // 2^1100 times the initial rate would be infinite.
        for _ in 0..1100 {
            path.round(&mut cc, 0.1, 100.0 * MBPS);
        }
        assert_eq!(cc.phase(), "startup");
        // Setup::default().max_cwnd = 1e9 packets of 1448 bytes per 100 ms.
        let cap = 1e9 * 1448.0 / 0.1;
        assert!((rate(&cc) / cap - 1.0).abs() < 1e-9, "{}", rate(&cc));
        assert_eq!(cc.cwnd(), 1e9);
    }

    #[test]
    fn an_absurd_rtt_sample_does_not_round_the_pacing_rate_to_zero() {
        let mut cc = lion();
        // 2^64 ns, about 584 years: 10 · 1448 B / 1.8e10 s ≈ 8e-7 B/s.
        cc.on_ack(&AckEvent {
            rtt: Some(Duration::from_nanos(u64::MAX)),
            ..crate::testkit::ack(1)
        });
        assert!(cc.rate < 1e-5, "{}", cc.rate);
        assert_eq!(cc.pacing_rate(), Some(1));
    }
}
