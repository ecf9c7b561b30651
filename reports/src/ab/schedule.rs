//! Which arm runs when: blocks of four trials, ABBA or BAAB (A = base), each block's
//! orientation drawn from the seed, so a run is repeated exactly from its seed and
//! neither arm always runs first after a pause.

use super::Arm;
use crate::stats::SplitMix64;

/// The blocks of a run, in order.
pub struct Schedule(SplitMix64);

impl Schedule {
    pub fn new(seed: u64) -> Schedule {
        Schedule(SplitMix64::new(seed))
    }

    /// The next block's four trials.
    pub fn next_block(&mut self) -> [Arm; 4] {
        if self.0.next_u64() & 1 == 0 {
            [Arm::Base, Arm::Head, Arm::Head, Arm::Base]
        } else {
            [Arm::Head, Arm::Base, Arm::Base, Arm::Head]
        }
    }
}

/// A block as its letters (`ABBA`).
pub fn letters(block: &[Arm]) -> String {
    block.iter().map(|a| a.letter()).collect()
}
