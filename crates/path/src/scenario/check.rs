//! A scenario's defaults, cross-references and ranges: what turns a parsed [`Scenario`] into a
//! [`Checked`] one, or an error that names the file, the field and what is allowed.

use super::*;

impl Scenario {
    /// Apply defaults and check every cross-reference and range.
    pub fn check(mut self, file: &str, default_name: &str) -> Result<Checked, ScenarioError> {
        let err = |field: String, message: String| ScenarioError::Field {
            file: file.to_string(),
            field,
            message,
        };
        let dur = self.duration.0;
        if dur == 0 {
            return Err(err("duration".into(), "must be positive".into()));
        }
        if self.links.is_empty() {
            return Err(err(
                "links".into(),
                "at least one [[links]] table is needed".into(),
            ));
        }
        let dir = Path::new(file).parent().unwrap_or(Path::new(""));
        let traces = self
            .links
            .iter_mut()
            .enumerate()
            .map(|(i, l)| read_traces(l, i, dir, &err))
            .collect::<Result<Vec<_>, _>>()?;
        let link_names: Vec<&str> = self.links.iter().map(|l| l.name.as_str()).collect();
        let known = link_names.join(", ");
        let find_link = |name: &str, field: String| {
            link_names
                .iter()
                .position(|n| *n == name)
                .ok_or_else(|| err(field, format!("no link named `{name}`; links are: {known}")))
        };
        for (i, l) in self.links.iter().enumerate() {
            if link_names[..i].contains(&l.name.as_str()) {
                return Err(err(
                    format!("links[{i}].name"),
                    format!("`{}` is used by two links", l.name),
                ));
            }
            if !(576..=65535).contains(&l.mtu) {
                return Err(err(
                    format!("links[{i}].mtu"),
                    format!("{} is outside 576..=65535 bytes", l.mtu),
                ));
            }
            if l.overhead.0 > l.mtu as u64 {
                return Err(err(
                    format!("links[{i}].overhead"),
                    format!(
                        "{} bytes of framing per packet exceeds the link's MTU ({} bytes); \
                         Ethernet adds 38",
                        l.overhead.0, l.mtu
                    ),
                ));
            }
            for (f, loss) in [("loss", l.loss), ("reverse_loss", l.reverse_loss)] {
                match loss {
                    LinkLoss::Probability(p) if !(0.0..1.0).contains(&p) => {
                        return Err(err(
                            format!("links[{i}].{f}"),
                            format!("{p} is not a probability in [0, 1)"),
                        ));
                    }
                    LinkLoss::Probability(_) => {}
                    LinkLoss::Model(m) => m
                        .check()
                        .map_err(|e| err(format!("links[{i}].{f}.{}", e.field), e.message))?,
                }
            }
            l.delay_config()
                .check()
                .map_err(|(what, message)| err(format!("links[{i}].{what}"), message))?;
            if !(l.distance_km >= 0.0 && l.distance_km.is_finite()) {
                return Err(err(
                    format!("links[{i}].distance_km"),
                    "must be a non-negative number of kilometres".into(),
                ));
            }
            // A trace's mean rate is checked as the trace.
            let fwd = if l.trace.is_some() { "trace" } else { "rate" };
            let rev = if l.reverse_trace.is_some() {
                "reverse_trace"
            } else {
                "reverse_rate"
            };
            check_rate(l.rate, &format!("links[{i}].{fwd}"), &err)?;
            if let Some(r) = l.reverse_rate {
                check_rate(r, &format!("links[{i}].{rev}"), &err)?;
            }
            check_queue(&l.queue, &format!("links[{i}].queue"), &err)?;
            if let Some(q) = &l.reverse_queue {
                check_queue(q, &format!("links[{i}].reverse_queue"), &err)?;
            }
        }

        let topo = &self.topology;
        let chain: Vec<usize> = match topo.kind {
            TopologyKind::Dumbbell => {
                let b = topo.bottleneck.as_deref().ok_or_else(|| {
                    err(
                        "topology.bottleneck".into(),
                        format!("a dumbbell needs `bottleneck = \"LINK\"`; links are: {known}"),
                    )
                })?;
                if topo.chain.is_some() {
                    return Err(err(
                        "topology.chain".into(),
                        "only a parking_lot has a chain; a dumbbell has `bottleneck`".into(),
                    ));
                }
                vec![find_link(b, "topology.bottleneck".into())?]
            }
            TopologyKind::ParkingLot => {
                let c = topo.chain.as_ref().ok_or_else(|| {
                    err(
                        "topology.chain".into(),
                        "a parking lot needs `chain = [\"LINK\", …]` (two or more links)".into(),
                    )
                })?;
                if c.len() < 2 {
                    return Err(err(
                        "topology.chain".into(),
                        "a parking lot needs two or more links".into(),
                    ));
                }
                if topo.bottleneck.is_some() {
                    return Err(err(
                        "topology.bottleneck".into(),
                        "a parking lot has a `chain`, not a single bottleneck".into(),
                    ));
                }
                let mut idx = Vec::new();
                for (j, n) in c.iter().enumerate() {
                    let k = find_link(n, format!("topology.chain[{j}]"))?;
                    if idx.contains(&k) {
                        return Err(err(
                            format!("topology.chain[{j}]"),
                            format!("`{n}` appears twice in the chain"),
                        ));
                    }
                    idx.push(k);
                }
                idx
            }
        };

        if self.flows.is_empty() {
            return Err(err(
                "flows".into(),
                "at least one [[flows]] table is needed".into(),
            ));
        }
        let total: u64 = self.flows.iter().map(|f| f.count as u64).sum();
        if total > MAX_FLOWS {
            return Err(err(
                "flows".into(),
                format!(
                    "{total} flows in all (the sum of `count`); the simulator runs at most \
                     {MAX_FLOWS} (each keeps about 32 KiB of state and its series)"
                ),
            ));
        }
        let mut flows = Vec::new();
        for (i, f) in self.flows.iter().enumerate() {
            let cc = CcSpec::from_toml(&f.cc)
                .map_err(|e| err(format!("flows[{i}].cc"), e.to_string()))?;
            if f.count == 0 {
                return Err(err(
                    format!("flows[{i}].count"),
                    "must be at least 1".into(),
                ));
            }
            let stop = f.stop.map(|s| s.0).unwrap_or(dur).min(dur);
            if f.start.0 >= stop {
                return Err(err(
                    format!("flows[{i}].start"),
                    format!(
                        "starts at {} s, not before its stop at {} s",
                        f.start.secs(),
                        stop as f64 * 1e-9
                    ),
                ));
            }
            let path = match (topo.kind, &f.path) {
                (TopologyKind::Dumbbell, None) => chain.clone(),
                (TopologyKind::Dumbbell, Some(_)) => {
                    return Err(err(
                        format!("flows[{i}].path"),
                        "dumbbell flows all cross the bottleneck; `path` is for parking_lot".into(),
                    ))
                }
                (TopologyKind::ParkingLot, None) => chain.clone(),
                (TopologyKind::ParkingLot, Some(p)) => {
                    let mut idx = Vec::new();
                    for (j, n) in p.iter().enumerate() {
                        idx.push(find_link(n, format!("flows[{i}].path[{j}]"))?);
                    }
                    let contiguous =
                        !idx.is_empty() && chain.windows(idx.len()).any(|w| w == idx.as_slice());
                    if !contiguous {
                        return Err(err(
                            format!("flows[{i}].path"),
                            format!(
                                "must be a contiguous run of the chain [{}] in order",
                                topo.chain
                                    .as_ref()
                                    .map(|c| c.join(", "))
                                    .unwrap_or_default()
                            ),
                        ));
                    }
                    idx
                }
            };
            if f.stack != Stack::Model && self.transport != TransportKind::Model {
                return Err(err(
                    format!("flows[{i}].stack"),
                    "imitating a TCP stack needs `transport = \"model\"`".into(),
                ));
            }
            if f.access.on_full == OnFull::Drop && f.access.rate.is_none() {
                return Err(err(
                    format!("flows[{i}].access.on_full"),
                    "`drop` needs a host queue: give the access link a `rate` (the NIC)".into(),
                ));
            }
            if let Some(r) = f.access.rate {
                check_rate(r, &format!("flows[{i}].access.rate"), &err)?;
            }
            for (host, stall) in [
                ("sender", f.host_stalls.sender),
                ("receiver", f.host_stalls.receiver),
            ] {
                if let Some(st) = stall {
                    check_stall(st, &format!("flows[{i}].host_stalls.{host}"), &err)?;
                }
            }
            if let Some(r) = f.access.packets {
                if r == 0 {
                    return Err(err(
                        format!("flows[{i}].access.packets"),
                        "must be at least 1".into(),
                    ));
                }
            }
            for _ in 0..f.count {
                flows.push(CheckedFlow {
                    id: flows.len() as u32,
                    spec: i,
                    cc: cc.clone(),
                    path: path.clone(),
                    start: f.start.0,
                    stop,
                });
            }
        }

        let mut cross = Vec::new();
        for (i, c) in self.cross_traffic.iter().enumerate() {
            let link = find_link(&c.link, format!("cross_traffic[{i}].link"))?;
            check_rate(c.rate, &format!("cross_traffic[{i}].rate"), &err)?;
            let packet_size = c
                .packet_size
                .map(|b| b.0)
                .unwrap_or(self.links[link].mtu as u64);
            if !(40..=self.links[link].mtu as u64).contains(&packet_size) {
                return Err(err(
                    format!("cross_traffic[{i}].packet_size"),
                    format!(
                        "{packet_size} bytes is outside 40..={} (the link's MTU)",
                        self.links[link].mtu
                    ),
                ));
            }
            let stop = c.stop.map(|s| s.0).unwrap_or(dur).min(dur);
            if c.start.0 >= stop {
                return Err(err(
                    format!("cross_traffic[{i}].start"),
                    "must be before its stop and the end of the run".into(),
                ));
            }
            let need = |field: &str, present: bool, kind: &str| {
                if present {
                    Ok(())
                } else {
                    Err(err(
                        format!("cross_traffic[{i}].{field}"),
                        format!("`{kind}` cross traffic needs `{field}`"),
                    ))
                }
            };
            let forbid = |field: &str, present: bool, kind: &str| {
                if present {
                    Err(err(
                        format!("cross_traffic[{i}].{field}"),
                        format!("`{kind}` cross traffic does not use `{field}`"),
                    ))
                } else {
                    Ok(())
                }
            };
            match c.kind {
                CrossKind::Cbr | CrossKind::Poisson => {
                    let k = if c.kind == CrossKind::Cbr {
                        "cbr"
                    } else {
                        "poisson"
                    };
                    forbid("on", c.on.is_some(), k)?;
                    forbid("off", c.off.is_some(), k)?;
                    forbid("size", c.size.is_some(), k)?;
                    forbid("shape", c.shape.is_some(), k)?;
                    if c.responsive {
                        return Err(err(
                            format!("cross_traffic[{i}].responsive"),
                            format!("`{k}` traffic is a packet process; responsive traffic is `web` or `onoff`"),
                        ));
                    }
                }
                CrossKind::Onoff => {
                    need("on", c.on.is_some_and(|d| d.0 > 0), "onoff")?;
                    need("off", c.off.is_some(), "onoff")?;
                    forbid("size", c.size.is_some(), "onoff")?;
                    forbid("shape", c.shape.is_some(), "onoff")?;
                }
                CrossKind::Web => {
                    forbid("on", c.on.is_some(), "web")?;
                    forbid("off", c.off.is_some(), "web")?;
                    if let Some(s) = c.shape {
                        if !(s > 1.0 && s.is_finite()) {
                            return Err(err(
                                format!("cross_traffic[{i}].shape"),
                                format!("{s}: a Pareto shape must exceed 1 for a finite mean size"),
                            ));
                        }
                    }
                    if c.size.is_some_and(|s| s.0 < packet_size) {
                        return Err(err(
                            format!("cross_traffic[{i}].size"),
                            "the mean transfer size must be at least one packet".into(),
                        ));
                    }
                }
            }
            let cc = match (&c.cc, c.responsive) {
                (Some(_), false) => {
                    return Err(err(
                        format!("cross_traffic[{i}].cc"),
                        "only responsive cross traffic has a congestion control; set `responsive = true`".into(),
                    ))
                }
                (Some(v), true) => Some(
                    CcSpec::from_toml(v).map_err(|e| err(format!("cross_traffic[{i}].cc"), e.to_string()))?,
                ),
                (None, true) => Some(
                    CcSpec::default_for("reno").map_err(|e| err(format!("cross_traffic[{i}].cc"), e.to_string()))?,
                ),
                (None, false) => None,
            };
            if c.responsive && c.reverse {
                return Err(err(
                    format!("cross_traffic[{i}].reverse"),
                    "responsive cross traffic runs in the data direction only".into(),
                ));
            }
            cross.push(CheckedCross {
                link,
                packet_size: packet_size as u32,
                cc,
                start: c.start.0,
                stop,
            });
        }
        if self.output.interval == AUTO_INTERVAL {
            let longest_rtt = flows
                .iter()
                .map(|f: &CheckedFlow| {
                    let path: u64 = f.path.iter().map(|&l| 2 * self.links[l].delay.0).sum();
                    path + self.flows[f.spec].extra_rtt.0
                })
                .max()
                .unwrap_or(0);
            self.output.interval = interval_for_rtt(longest_rtt);
        }
        if self.output.interval.0 == 0 {
            return Err(err("output.interval".into(), "must be positive".into()));
        }
        // Every flow and every queue keeps one sample per interval in memory for the whole
        // run; a tiny interval over a long run would exhaust it.
        let samples = dur / self.output.interval.0;
        if samples > MAX_SAMPLES {
            return Err(err(
                "output.interval".into(),
                format!(
                    "{} over {} is {samples} samples per series, more than the {MAX_SAMPLES} \
                     kept in memory: use an interval of at least {}",
                    fmt_ns(self.output.interval.0),
                    fmt_ns(dur),
                    fmt_ns(dur.div_ceil(MAX_SAMPLES)),
                ),
            ));
        }
        let name = self
            .name
            .clone()
            .unwrap_or_else(|| default_name.to_string());
        Ok(Checked {
            scenario: self,
            flows,
            cross,
            traces,
            name,
        })
    }
}

/// Reads a link's trace files (`trace`, `reverse_trace`; a relative path from `dir`, the
/// scenario file's directory) and fills in the rates they give: a trace's mean rate. A file
/// gives each direction a rate or a trace, not both; the ACK direction follows the data
/// direction's trace unless it has a rate or a trace of its own.
fn read_traces(
    l: &mut LinkSpec,
    i: usize,
    dir: &Path,
    err: &dyn Fn(String, String) -> ScenarioError,
) -> Result<LinkTraces, ScenarioError> {
    let read = |name: &str, field: &str| {
        Trace::from_file(&dir.join(name))
            .map_err(|e| err(format!("links[{i}].{field}"), e.to_string()))
    };
    let forward = match (&l.trace, l.rate.0.is_nan()) {
        (Some(_), false) => {
            return Err(err(
                format!("links[{i}].trace"),
                "a link's capacity is a `rate` or a `trace`, not both; remove one".into(),
            ))
        }
        (None, true) => {
            return Err(err(
                format!("links[{i}].rate"),
                "missing: give the link's `rate` (or a mahimahi `trace` file)".into(),
            ))
        }
        (Some(name), true) => {
            let t = read(name, "trace")?;
            l.rate = Rate(t.mean_rate_bps());
            Some(t)
        }
        (None, false) => None,
    };
    let reverse =
        match (&l.reverse_trace, l.reverse_rate) {
            (Some(_), Some(_)) => return Err(err(
                format!("links[{i}].reverse_trace"),
                "the ACK direction's capacity is a `reverse_rate` or a `reverse_trace`, not both; \
                 remove one"
                    .into(),
            )),
            (Some(name), None) => {
                let t = read(name, "reverse_trace")?;
                l.reverse_rate = Some(Rate(t.mean_rate_bps()));
                Some(t)
            }
            (None, Some(_)) => None,
            (None, None) => forward.clone(),
        };
    Ok(LinkTraces { forward, reverse })
}

/// Most samples one time series may hold (an hour at 3.6 ms; seed 000's hour at the default
/// 100 ms is 36,000).
pub const MAX_SAMPLES: u64 = 1_000_000;

/// The fastest rate a scenario may give: the emulator's cap, and the fastest Ethernet. The
/// clock counts whole nanoseconds, so a 1500-byte packet at 400 Gb/s takes 30 ns; far above,
/// serialisation times round to 0 and a link stops limiting anything.
pub const MAX_RATE_BPS: f64 = 400e9;
/// The slowest rate: 1 kbit/s, below which a full packet takes minutes.
pub const MIN_RATE_BPS: f64 = 1e3;
/// Most flows a scenario may run (the sum of every `count`); `budget` then checks that they
/// fit in memory.
pub const MAX_FLOWS: u64 = 1_000_000;

/// A rate within [`MIN_RATE_BPS`, `MAX_RATE_BPS`].
fn check_rate(
    r: Rate,
    field: &str,
    err: &dyn Fn(String, String) -> ScenarioError,
) -> Result<(), ScenarioError> {
    if (MIN_RATE_BPS..=MAX_RATE_BPS).contains(&r.0) {
        return Ok(());
    }
    Err(err(
        field.to_string(),
        format!(
            "{:e} bit/s is outside the simulator's range, 1kbit to 400gbit: the clock counts \
             whole nanoseconds (a 1500-byte packet at 400 Gb/s takes 30 ns), and the emulator \
             caps rates at 400 Gb/s too",
            r.0
        ),
    ))
}

/// A host's stall process: a rate within [0, `MAX_STALL_RATE`] and, if it ever stalls, a
/// positive mean length.
fn check_stall(
    st: StallSpec,
    field: &str,
    err: &dyn Fn(String, String) -> ScenarioError,
) -> Result<(), ScenarioError> {
    if st.rate.0 > MAX_STALL_RATE {
        return Err(err(
            format!("{field}.rate"),
            format!(
                "{} stalls per second is more than the {MAX_STALL_RATE} allowed (one per \
                 100 us of running); give a rate such as \"4/s\"",
                st.rate.0
            ),
        ));
    }
    if st.rate.0 > 0.0 && st.mean.0 == 0 {
        return Err(err(
            format!("{field}.mean"),
            "a stall lasts a positive time: give a mean such as \"2.5ms\" (or `rate = 0` for \
             no stalls)"
                .into(),
        ));
    }
    Ok(())
}

/// A duration for an error message, in the largest unit that keeps it exact enough.
fn fmt_ns(ns: u64) -> String {
    match ns {
        n if n >= 1_000_000_000 => format!("{} s", n as f64 / 1e9),
        n if n >= 1_000_000 => format!("{} ms", n as f64 / 1e6),
        n if n >= 1_000 => format!("{} us", n as f64 / 1e3),
        n => format!("{n} ns"),
    }
}

fn check_queue(
    q: &QueueSpec,
    field: &str,
    err: &dyn Fn(String, String) -> ScenarioError,
) -> Result<(), ScenarioError> {
    match (q.packets, q.bytes) {
        (Some(_), Some(_)) => {
            return Err(err(
                field.to_string(),
                "give the size in `packets` or in `bytes`, not both".into(),
            ))
        }
        (None, None) => {
            return Err(err(
                field.to_string(),
                "needs a size: `packets = N` or `bytes = \"SIZE\"`".into(),
            ))
        }
        (Some(0), _) | (_, Some(Bytes(0))) => {
            return Err(err(
                field.to_string(),
                "a queue holds at least one packet".into(),
            ))
        }
        _ => {}
    }
    let red_only = [
        ("min_th", q.min_th.is_some()),
        ("max_th", q.max_th.is_some()),
        ("max_p", q.max_p.is_some()),
        ("weight", q.weight.is_some()),
        ("gentle", q.gentle.is_some()),
        ("ecn", q.ecn.is_some()),
    ];
    if q.kind == QueueKind::Droptail {
        if let Some((name, _)) = red_only.iter().find(|(_, set)| *set) {
            return Err(err(
                format!("{field}.{name}"),
                "is a RED parameter; set `kind = \"red\"` or remove it".into(),
            ));
        }
        return Ok(());
    }
    let limit = q
        .packets
        .map(|p| p as f64)
        .or(q.bytes.map(|b| b.0 as f64))
        .unwrap_or(0.0);
    let p = q.red_params(limit);
    if !(p.min_th > 0.0 && p.min_th < p.max_th) {
        return Err(err(
            format!("{field}.min_th"),
            format!("need 0 < min_th ({}) < max_th ({})", p.min_th, p.max_th),
        ));
    }
    // The thresholds are in the queue's own unit (packets or bytes); above its limit a
    // threshold is never reached and RED silently becomes droptail.
    let unit = if q.packets.is_some() {
        "packets"
    } else {
        "bytes"
    };
    for (name, th) in [("min_th", p.min_th), ("max_th", p.max_th)] {
        if th > limit {
            return Err(err(
                format!("{field}.{name}"),
                format!(
                    "{name} ({th}) exceeds the queue limit ({limit} {unit}): RED's thresholds \
                     must lie within the queue; lower it or raise the queue's size"
                ),
            ));
        }
    }
    if !(p.max_p > 0.0 && p.max_p <= 1.0) {
        return Err(err(
            format!("{field}.max_p"),
            format!("{} is not in (0, 1]", p.max_p),
        ));
    }
    if !(p.weight > 0.0 && p.weight <= 1.0) {
        return Err(err(
            format!("{field}.weight"),
            format!("{} is not in (0, 1]", p.weight),
        ));
    }
    Ok(())
}
