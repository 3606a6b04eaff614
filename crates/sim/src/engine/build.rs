//! Building the network of a checked scenario: two ports per link, each flow's access ports
//! and routes, its endpoints, and the cross-traffic sources (the topology rules are in
//! `engine`'s module comment).

use super::endpoints::{make_endpoints, Endpoints};
use super::*;

fn queue_limit(q: &QueueSpec) -> QueueLimits {
    match (q.packets, q.bytes) {
        (Some(p), _) => QueueLimits::packets(p),
        (None, Some(b)) => QueueLimits::bytes(b.0),
        (None, None) => QueueLimits::packets(1000),
    }
}

fn make_red(q: &QueueSpec) -> Option<Red> {
    (q.kind == QueueKind::Red).then(|| {
        let limits = queue_limit(q);
        let limit = limits.packets.or(limits.bytes).unwrap_or(0);
        Red::new(q.red_params(limit as f64))
    })
}
impl<'a> Engine<'a> {
    /// An engine for `checked` with no network, no events and nothing counted yet.
    pub(super) fn empty(checked: &'a Checked) -> Engine<'a> {
        Engine {
            checked,
            now: 0,
            end: checked.scenario.duration.0,
            events: EventQueue::default(),
            ports: Vec::new(),
            port_rng: Vec::new(),
            link_ports: Vec::new(),
            flows: Vec::new(),
            cross: Vec::new(),
            bufs: BufPool::default(),
            scratch: Vec::with_capacity(2048),
            flow_series: Vec::new(),
            port_series: Vec::new(),
            aggregate_series: AggregateSeries::default(),
            arrived_at_sample: 0,
            trace: None,
            drops: Vec::new(),
            drops_unlogged: 0,
            per_second: Vec::new(),
            delivered_at_second: 0,
            event_count: 0,
            packet_count: 0,
            link: None,
        }
    }

    /// Build the network; refuses a run that would not fit in the machine's memory
    /// (`budget`).
    pub fn new(checked: &'a Checked) -> Result<Engine<'a>, SimError> {
        if let Some(limit) = crate::budget::available_memory() {
            crate::budget::check(checked, limit)?;
        }
        let sc = &checked.scenario;
        let mut e = Engine::empty(checked);
        for (i, l) in sc.links.iter().enumerate() {
            let rq = l.reverse_queue.as_ref().unwrap_or(&l.queue);
            // A trace's opportunities count from the start of the run.
            let traces = checked.traces.get(i).cloned().unwrap_or_default();
            let serializer = |trace: Option<Trace>, rate: f64| match trace {
                Some(t) => Serializer::trace(t, 0),
                None => Serializer::rate(rate),
            };
            let f = e.add_port(
                Port::new(
                    i,
                    false,
                    serializer(traces.forward, l.rate.0),
                    l.delay_config(),
                    l.loss.config(),
                    queue_limit(&l.queue),
                    make_red(&l.queue),
                    l.mtu,
                )
                .with_overhead(l.overhead.0 as u32),
            );
            let r = e.add_port(
                Port::new(
                    i,
                    true,
                    serializer(traces.reverse, l.reverse_rate.unwrap_or(l.rate).0),
                    l.delay_config(),
                    l.reverse_loss.config(),
                    queue_limit(rq),
                    make_red(rq),
                    l.mtu,
                )
                .with_overhead(l.overhead.0 as u32),
            );
            e.link_ports.push((f, r));
            e.record_series(f);
            e.record_series(r);
        }
        for f in &checked.flows {
            let spec = &sc.flows[f.spec];
            let mtu = path_mtu(sc, &f.path);
            let access_delay = spec.access.delay.map(|d| d.0).unwrap_or(0) + spec.extra_rtt.0 / 2;
            let access = if spec.access.rate.is_some() || access_delay > 0 {
                let limit = spec.access.packets.unwrap_or(1000);
                let fwd = e.add_port(Port::new(
                    usize::MAX,
                    false,
                    spec.access
                        .rate
                        .map_or(Serializer::Unlimited, |r| Serializer::rate(r.0)),
                    DelayConfig::constant(access_delay),
                    LossConfig::None,
                    QueueLimits::packets(limit),
                    None,
                    mtu,
                ));
                let rev = e.add_port(Port::new(
                    usize::MAX,
                    true,
                    Serializer::Unlimited,
                    DelayConfig::constant(access_delay + spec.extra_rtt.0 % 2),
                    LossConfig::None,
                    QueueLimits::packets(limit),
                    None,
                    mtu,
                ));
                if spec.access.rate.is_some() {
                    e.record_series(fwd);
                }
                Some((fwd, rev, spec.access.rate.is_some().then_some(limit)))
            } else {
                None
            };
            let mut fwd: Vec<u32> = access.iter().map(|a| a.0).collect();
            fwd.extend(f.path.iter().map(|&l| e.link_ports[l].0));
            let mut rev: Vec<u32> = f.path.iter().rev().map(|&l| e.link_ports[l].1).collect();
            rev.extend(access.iter().map(|a| a.1));
            let setup = Setup {
                seed: mix(sc.seed, 1_000_000 + f.id as u64),
                ..Setup::for_mtu(mtu)
            };
            let cc = f.cc.build(&setup).map_err(|err| SimError::Controller {
                flow: f.id.to_string(),
                cc: f.cc.to_string(),
                message: err.to_string(),
            })?;
            let base_rtt: u64 =
                2 * (f.path.iter().map(|&l| sc.links[l].delay.0).sum::<u64>() + access_delay);
            let rate = f
                .path
                .iter()
                .map(|&l| sc.links[l].rate.0)
                .fold(f64::INFINITY, f64::min);
            let (sender, receiver) = make_endpoints(
                sc.transport,
                cc,
                &f.cc,
                setup,
                Endpoints {
                    mtu,
                    start: f.start,
                    stop: f.stop,
                    bytes: spec.bytes.map(|b| b.0),
                    ecn: spec.ecn,
                    bdp_bytes: (rate * base_rtt as f64 / 8e9) as u64,
                    linux24: spec.stack == Stack::Linux24,
                },
            )
            .map_err(|message| SimError::Transport {
                flow: f.id.to_string(),
                message,
            })?;
            // Each host's own stream, so that stalls change no other random draw.
            let stall = |side: u64, st: Option<crate::scenario::StallSpec>| {
                let st = st?;
                let seed = mix(sc.seed, 3_000_000 + 2 * f.id as u64 + side);
                HostStall::new(st.rate.0, st.mean.0, seed, sc.duration.0).map(Box::new)
            };
            let stalls = [
                stall(0, spec.host_stalls.sender),
                stall(1, spec.host_stalls.receiver),
            ];
            e.flows.push(Flow {
                sender: Some(sender),
                receiver: Some(receiver),
                access: access.and_then(|a| a.2.map(|l| (a.0, l, spec.access.on_full))),
                stalls,
                ..Flow::new(Some(f.id), None, fwd.into(), rev.into())
            });
            e.flow_series.push(FlowSeries::default());
        }
        for (i, c) in checked.cross.iter().enumerate() {
            let spec = &sc.cross_traffic[i];
            let l = &sc.links[c.link];
            let port = if spec.reverse {
                e.link_ports[c.link].1
            } else {
                e.link_ports[c.link].0
            };
            let src = CrossSource::new(
                &CrossConfig::from_scenario(spec, c),
                0,
                l.rate.0,
                cross_seed(sc.seed, i),
            );
            let first = src.first_event();
            let responsive = c.cc.is_some();
            e.cross.push(CrossState {
                src,
                link: c.link,
                port,
                cc: c.cc.clone(),
                delivered: 0,
                completed: 0,
            });
            if responsive {
                e.events.push(first, Ev::Transfer(i as u32));
            } else {
                e.events.push(first, Ev::Cross(i as u32));
            }
        }
        e.events.push(0, Ev::Sample);
        e.events.push(1_000_000_000, Ev::Second);
        Ok(e)
    }

    pub(super) fn add_port(&mut self, mut p: Port) -> u32 {
        let i = self.ports.len() as u32;
        p.index = i as usize;
        self.ports.push(p);
        self.port_series.push(None);
        self.port_rng.push(Pcg64Mcg::new(
            mix(self.checked.scenario.seed, i as u64) as u128 | 1,
        ));
        i
    }

    /// Sample this port's queue length and throughput at the output interval.
    pub(super) fn record_series(&mut self, port: u32) {
        self.port_series[port as usize] = Some((LinkSeries::default(), 0));
    }
}
