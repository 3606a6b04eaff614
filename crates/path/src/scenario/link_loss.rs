//! A link direction's random loss as a scenario writes it: a probability (`loss = 0.001`,
//! Bernoulli) or a model table (`loss = { model = "gilbert_elliott", p = 0.01, r = 0.25 }`,
//! any [`LossConfig`]).

use crate::loss::LossConfig;
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use std::fmt;

/// `loss` or `reverse_loss` of a `[[links]]` table.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum LinkLoss {
    /// Every packet is lost independently with this probability.
    Probability(f64),
    /// A loss model's table.
    Model(LossConfig),
}

impl Default for LinkLoss {
    /// No loss.
    fn default() -> Self {
        LinkLoss::Probability(0.0)
    }
}

impl LinkLoss {
    /// The model this runs: a positive probability is Bernoulli loss, zero is none.
    pub fn config(&self) -> LossConfig {
        match *self {
            LinkLoss::Probability(p) if p > 0.0 => LossConfig::Bernoulli { p },
            LinkLoss::Probability(_) => LossConfig::None,
            LinkLoss::Model(m) => m,
        }
    }

    /// The long-run fraction of packets lost.
    pub fn mean(&self) -> f64 {
        self.config().mean_loss()
    }
}

impl From<f64> for LinkLoss {
    fn from(p: f64) -> Self {
        LinkLoss::Probability(p)
    }
}

struct LinkLossVisitor;

impl<'de> Visitor<'de> for LinkLossVisitor {
    type Value = LinkLoss;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(
            "a loss probability (0.001) or a loss model table \
             ({ model = \"gilbert_elliott\", p = 0.01, r = 0.25 })",
        )
    }

    fn visit_f64<E: de::Error>(self, p: f64) -> Result<LinkLoss, E> {
        Ok(LinkLoss::Probability(p))
    }

    fn visit_i64<E: de::Error>(self, p: i64) -> Result<LinkLoss, E> {
        Ok(LinkLoss::Probability(p as f64))
    }

    fn visit_u64<E: de::Error>(self, p: u64) -> Result<LinkLoss, E> {
        Ok(LinkLoss::Probability(p as f64))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<LinkLoss, A::Error> {
        LossConfig::deserialize(de::value::MapAccessDeserializer::new(map)).map(LinkLoss::Model)
    }
}

impl<'de> Deserialize<'de> for LinkLoss {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LinkLossVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct T {
        loss: LinkLoss,
    }

    fn parse(s: &str) -> Result<LinkLoss, String> {
        toml::from_str::<T>(s)
            .map(|t| t.loss)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_number_or_a_table() {
        assert_eq!(parse("loss = 0.01"), Ok(LinkLoss::Probability(0.01)));
        assert_eq!(parse("loss = 0"), Ok(LinkLoss::Probability(0.0)));
        assert_eq!(LinkLoss::Probability(0.0).config(), LossConfig::None);
        let ge = parse("loss = { model = \"gilbert_elliott\", p = 0.01, r = 0.25 }").unwrap();
        assert!((ge.mean() - 0.01 / 0.26).abs() < 1e-12);
        assert_eq!(
            parse("loss = { model = \"bernoulli\", p = 0.02 }").map(|l| l.config()),
            Ok(LossConfig::Bernoulli { p: 0.02 })
        );
    }

    #[test]
    fn bad_tables_say_what_is_allowed() {
        let e = parse("loss = { model = \"fading\" }").unwrap_err();
        assert!(e.contains("gilbert_elliott"), "{e}");
        let e = parse("loss = { model = \"bernoulli\", p = 0.1, q = 2 }").unwrap_err();
        assert!(e.contains("unknown field `q`"), "{e}");
        let e = parse("loss = \"1%\"").unwrap_err();
        assert!(e.contains("a loss probability"), "{e}");
    }
}
