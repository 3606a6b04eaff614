//! The emulator's summary as text for people: the table of what each direction carried,
//! dropped and delayed, and the warnings about what went wrong besides the path, printed when
//! a run stops (as the benchmark's report prints its own table, `crate::bench`). The JSON
//! summary is [`Summary`] itself.

use crate::emulator::Summary;

impl Summary {
    /// What went wrong besides the path: output files left incomplete, packets the hosts'
    /// TUN queues dropped (the emulator fell behind, or a host did); none of them path losses.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        for o in self.event_log.iter().chain(&self.pcap) {
            if !o.complete {
                out.push(format!(
                    "{} is incomplete: {} of {} records were not written ({})",
                    o.path,
                    o.records_lost,
                    o.records,
                    o.error.as_deref().unwrap_or("write error")
                ));
            }
        }
        let (tx, rx) = (self.tun_tx_dropped, self.tun_rx_dropped);
        if tx.iter().any(|&x| x > 0) {
            out.push(format!(
                "the hosts' TUN queues dropped {} (a) and {} (b) packets before the emulator \
                 read them (emulator overloaded; these are not path losses)",
                tx[0], tx[1]
            ));
        }
        if rx.iter().any(|&x| x > 0) {
            out.push(format!(
                "the hosts' stacks refused {} (a) and {} (b) packets the emulator delivered \
                 (TUN rx_dropped: a host fell behind; these are not path losses)",
                rx[0], rx[1]
            ));
        }
        out
    }

    /// Per direction: packets arrived and delivered, throughput, drops by reason and the
    /// release lateness percentiles.
    pub fn table(&self) -> String {
        let mut s = format!(
            "{:<4} {:>10} {:>10} {:>12} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9} {:>9}\n",
            "dir",
            "arrived",
            "delivered",
            "Mb/s",
            "loss",
            "queue",
            "red",
            "mem",
            "late p50",
            "late p99",
            "late max"
        );
        for d in &self.directions {
            let c = &d.counters;
            s += &format!(
                "{:<4} {:>10} {:>10} {:>12.3} {:>8} {:>8} {:>8} {:>8} {:>7.1}us {:>7.1}us {:>7.1}us\n",
                d.direction,
                c.arrived_packets,
                c.delivered_packets,
                d.throughput_bps / 1e6,
                c.dropped_random_loss,
                c.dropped_queue_full,
                c.dropped_red_early + c.dropped_red_forced,
                d.io.dropped_memory,
                d.lateness.p50_ns as f64 / 1e3,
                d.lateness.p99_ns as f64 / 1e3,
                d.lateness.max_ns as f64 / 1e3
            );
        }
        s
    }
}
