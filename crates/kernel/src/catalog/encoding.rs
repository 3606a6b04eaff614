//! Parameter values to and from the programs' parameter blocks: the fixed-point `u32` fields of
//! `struct lh_<algorithm>_params`, in the order the C struct declares them.

use super::{Algorithm, ParamValues};

impl ParamValues {
    /// The program's parameter block: the C struct `lh_<algorithm>_params`, field by field.
    pub fn encode(&self) -> Vec<u32> {
        let flag = |n: &str| self.get(n) as u32;
        match self.algorithm {
            Algorithm::Fast => vec![
                flag("alpha"),
                q10(self.get("gamma")),
                (self.get("update_period") * 1e6).round() as u32,
                (self.get("mi_threshold") * 1e6).round() as u32,
                (1.0 / self.get("eta_cap")).round() as u32,
                flag("min2w_cap"),
                flag("every_other_rtt"),
                flag("pace_increments"),
                flag("rto_cwnd"),
                flag("beta"),
                flag("period_min"),
                flag("pace"),
                q10(self.get("climb")),
                flag("mi_backlog"),
            ],
            Algorithm::Scalable => vec![
                (1.0 / self.get("a")).round() as u32,
                q10(self.get("b")),
                flag("legacy_threshold"),
                flag("legacy_decrease"),
            ],
            Algorithm::Vegas => vec![
                flag("alpha"),
                flag("beta"),
                flag("gamma"),
                flag("linux_compat"),
            ],
            Algorithm::HighSpeed => vec![flag("per_ack_ignores_acked"), 0, 0, 0],
            Algorithm::Lion => vec![
                (self.get("queue_threshold") * 1e6).round() as u32,
                (self.get("rise_threshold") * 1e6).round() as u32,
                q10(self.get("mbs_initial")),
                q10(self.get("mbs_max")),
                q10(self.get("mbs_step")),
                q16(self.get("mbs_decrease")),
                q16(self.get("startup_gain")),
                q16(self.get("probe_gain")),
                q16(self.get("compete_drop")),
                q16(self.get("loss_decrease")),
                q16(self.get("shuffle_scale")),
                flag("yield_rounds"),
                q16(self.get("balance_gain")),
                q16(self.get("balance_share")),
                q16(self.get("cwnd_gain")),
            ],
        }
    }

    /// The values a parameter block stands for (the effective values after fixed point);
    /// `None` when the block is too short for the algorithm.
    pub fn decode(algorithm: Algorithm, raw: &[u32]) -> Option<ParamValues> {
        let f = |i: usize| raw.get(i).map(|&v| v as f64);
        let values = match algorithm {
            Algorithm::Fast => vec![
                ("alpha", f(0)?),
                // Absent from blocks written before the dead band existed: no band.
                ("beta", f(9).unwrap_or(0.0)),
                ("gamma", f(1)? / 1024.0),
                ("update_period", f(2)? / 1e6),
                ("mi_threshold", f(3)? / 1e6),
                ("eta_cap", 1.0 / f(4)?.max(1.0)),
                ("min2w_cap", f(5)?),
                ("every_other_rtt", f(6)?),
                ("pace_increments", f(7)?),
                ("rto_cwnd", f(8)?),
                // Absent from blocks written before these options existed: the papers' way.
                ("period_min", f(10).unwrap_or(0.0)),
                ("pace", f(11).unwrap_or(0.0)),
                ("climb", f(12).unwrap_or(0.0) / 1024.0),
                ("mi_backlog", f(13).unwrap_or(0.0)),
            ],
            Algorithm::Scalable => vec![
                ("a", 1.0 / f(0)?.max(1.0)),
                ("b", f(1)? / 1024.0),
                ("legacy_threshold", f(2)?),
                ("legacy_decrease", f(3)?),
            ],
            Algorithm::Vegas => vec![
                ("alpha", f(0)?),
                ("beta", f(1)?),
                ("gamma", f(2)?),
                ("linux_compat", f(3)?),
            ],
            Algorithm::HighSpeed => vec![("per_ack_ignores_acked", f(0)?)],
            Algorithm::Lion => vec![
                ("queue_threshold", f(0)? / 1e6),
                ("rise_threshold", f(1)? / 1e6),
                ("mbs_initial", f(2)? / 1024.0),
                ("mbs_max", f(3)? / 1024.0),
                ("mbs_step", f(4)? / 1024.0),
                ("mbs_decrease", f(5)? / 65536.0),
                ("startup_gain", f(6)? / 65536.0),
                ("probe_gain", f(7)? / 65536.0),
                ("compete_drop", f(8)? / 65536.0),
                ("loss_decrease", f(9)? / 65536.0),
                ("shuffle_scale", f(10)? / 65536.0),
                ("yield_rounds", f(11)?),
                ("balance_gain", f(12)? / 65536.0),
                ("balance_share", f(13)? / 65536.0),
                ("cwnd_gain", f(14)? / 65536.0),
            ],
        };
        Some(ParamValues { algorithm, values })
    }
}

fn q10(x: f64) -> u32 {
    (x * 1024.0).round() as u32
}

fn q16(x: f64) -> u32 {
    (x * 65536.0).round() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_encode_to_the_linux_and_paper_constants() {
        // Scalable: 1/a = 100 (TCP_SCALABLE_AI_CNT), b = 128/1024 = 1/8 (MD_SCALE 3).
        let s = ParamValues::defaults(Algorithm::Scalable).encode();
        assert_eq!(s, [100, 128, 100, 0]);
        // FAST: γ = 0.5 is 512 in Q10; 20 ms and 0.75 ms in µs; η cap 1/4; no dead
        // band; the per-period minimum RTT, TCP's pacing, a climb of 1/8 (128 in Q10) and MI
        // ending at a backlog of 4 packets.
        let f = ParamValues::defaults(Algorithm::Fast).encode();
        assert_eq!(f, [200, 512, 20_000, 750, 4, 1, 1, 1, 2, 0, 1, 1, 128, 4]);
        assert_eq!(
            ParamValues::defaults(Algorithm::HighSpeed).encode(),
            [1, 0, 0, 0]
        );
        // Vegas: Linux module defaults α = 2, β = 4, γ = 1.
        assert_eq!(
            ParamValues::defaults(Algorithm::Vegas).encode(),
            [2, 4, 1, 0]
        );
    }

    #[test]
    fn settings_override_and_round_trip() {
        let v = ParamValues::from_settings(
            Algorithm::Fast,
            &[
                "alpha=50",
                "gamma=0.25",
                "eta_cap=0.00390625",
                "min2w_cap=false",
                "beta=80",
                "period_min=true",
                "pace=1",
                "climb=0.125",
                "mi_backlog=12",
            ],
        )
        .unwrap();
        assert_eq!(
            v.encode(),
            [50, 256, 20_000, 750, 256, 0, 1, 1, 2, 80, 1, 1, 128, 12]
        );
        assert_eq!(ParamValues::decode(Algorithm::Fast, &v.encode()), Some(v));
        assert_eq!(ParamValues::decode(Algorithm::Fast, &[1, 2, 3]), None);
        let k = ParamValues::from_settings(
            Algorithm::Scalable,
            &["legacy_threshold=16", "legacy_decrease=true", "a=0.02"],
        )
        .unwrap();
        assert_eq!(k.encode(), [50, 128, 16, 1]);
    }

    #[test]
    fn lion_encodes_in_microseconds_q10_packets_and_q16_fractions() {
        let d = ParamValues::defaults(Algorithm::Lion).encode();
        // 1 ms, 0.5 ms; 4, 4096 and 1 packets in Q10; 0.75, 2, 0.05, 0.2, 0.85, 1 in Q16; 4
        // rounds; 0.1, 0.5, 2 in Q16.
        assert_eq!(
            d,
            [
                1000, 500, 4096, 4_194_304, 1024, 49152, 131_072, 3277, 13107, 55706, 65536, 4,
                6554, 32768, 131_072
            ]
        );
        let back = ParamValues::decode(Algorithm::Lion, &d).unwrap();
        assert_eq!(back.get("mbs_max"), 4096.0);
        assert!((back.get("probe_gain") - 0.05).abs() < 1.0 / 65536.0);
    }
}
