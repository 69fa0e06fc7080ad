//! Runs one multi-buffer kernel over BLOCKS 64-byte blocks per lane, for
//! counting the instructions it executes (scripts/probe/kernel-instructions runs
//! it under qemu at two block counts; the difference, over the blocks and
//! the lanes, is the kernel's instructions per block per lane).
//!
//!     lane_blocks md5|sha1 WIDTH BLOCKS

use fastsum::simd::{md5, sha1, Width};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, algorithm, width, blocks] = &args[..] else {
        eprintln!("usage: lane_blocks md5|sha1 WIDTH BLOCKS");
        std::process::exit(2);
    };
    let blocks: usize = blocks.parse().expect("BLOCKS is a number");
    // Zeroed memory comes from the kernel as it is touched: no guest
    // instructions per byte besides the kernel's own.
    let data = vec![0u8; 32 * blocks * 64];
    let slices: Vec<&[u8]> = data.chunks(blocks * 64).collect();
    let folded = match algorithm.as_str() {
        "md5" => {
            let width = Width::ALL
                .into_iter()
                .find(|w| w.name() == width)
                .filter(|w| md5::supported_widths().contains(w))
                .expect("a width this CPU runs");
            let mut states = vec![[0u32; 4]; width.lanes()];
            md5::compress_lanes(width, &mut states, &slices, blocks);
            states.iter().flatten().fold(0u32, |a, w| a ^ w)
        }
        "sha1" => {
            let width = Width::ALL
                .into_iter()
                .find(|w| w.name() == width)
                .filter(|w| sha1::supported_widths().contains(w))
                .expect("a width this CPU runs");
            let mut states = vec![sha1::INIT; width.lanes()];
            sha1::compress_lanes(width, &mut states, &slices, blocks);
            states.iter().flatten().fold(0u32, |a, w| a ^ w)
        }
        _ => panic!("md5 or sha1"),
    };
    println!("{folded:08x}");
}
