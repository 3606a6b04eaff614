//! The algorithms, one file each. Each file's header comment teaches its algorithm, cites its
//! source and says where this code deviates.

use crate::registry::Algorithm;

pub mod bbr;
pub mod cubic;
pub mod fast;
pub mod highspeed;
pub mod lion;
pub mod paced;
pub mod reno;
pub mod scalable;
pub mod vegas;

/// The registry, in display order.
pub(crate) static ALL: &[Algorithm] = &[
    reno::ALGORITHM,
    highspeed::ALGORITHM,
    scalable::ALGORITHM,
    vegas::ALGORITHM,
    fast::ALGORITHM,
    cubic::ALGORITHM,
    bbr::ALGORITHM,
    lion::ALGORITHM,
];

/// Senders for experiments that `registry::find` accepts but the registry does not list: they do
/// not control congestion (seed 002's fixed-rate, fixed-burst sender).
pub(crate) static EXPERIMENTS: &[Algorithm] = &[paced::ALGORITHM];
