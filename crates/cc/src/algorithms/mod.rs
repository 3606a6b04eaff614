//! The algorithms, one file each. Each file's header comment teaches its algorithm, cites its
//! source and says where this code deviates.

use crate::registry::Algorithm;

pub mod bbr;
pub mod cubic;
pub mod reno;

/// The registry, in display order.
pub(crate) static ALL: &[Algorithm] = &[reno::ALGORITHM, cubic::ALGORITHM, bbr::ALGORITHM];
