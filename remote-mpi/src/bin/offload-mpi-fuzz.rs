//! `offload-mpi-fuzz`: feeds a device server malformed requests and checks that it
//! neither crashes nor hangs, answers every request it can read the tag of (a bad one
//! with an error), and goes on serving well-formed requests with its memory intact.
//!
//! ```text
//! mpirun -np 1 offload-mpi-device : -np 1 offload-mpi-fuzz [EXECUTIONS] [SEED]
//! ```
//!
//! An execution is one request: random bytes; a well-formed request of any kind with
//! random (often near-valid) fields; either of them mutated (bytes flipped, cut short,
//! lengthened); a request whose data follows in fragments that are right, empty (the
//! sender gave up), oversized, or (rarely, it costs the liveness timeout) missing or on
//! another tag. The fuzzer decodes what it sent as the server will, so it knows which
//! answer (and which data) to expect. It stops at the first server failure with the
//! request's bytes. Not installed: a test tool.

use offload::plugins::remote::wire::{self, Reply, Request, INLINE_LIMIT};
use offload_remote_mpi::transport::{Transport, Wait, FIRST_OPERATION_TAG, TAG_REQUEST};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// A small, fast, seeded generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
    /// Fewer than `max` random bytes.
    fn some_bytes(&mut self, max: u64) -> Vec<u8> {
        let n = self.below(max) as usize;
        self.bytes(n)
    }
}

/// What the fuzzer knows of the server: a region it allocated, and allocations the
/// fuzzed requests made (freed now and then).
struct Known {
    region: u64,
    region_size: u64,
    allocations: Vec<u64>,
}

/// A size: often small, sometimes the region's or around it, sometimes huge.
fn size(rng: &mut Rng, known: &Known) -> u64 {
    match rng.below(6) {
        0 => 0,
        1 => rng.below(64),
        2 => rng.below(INLINE_LIMIT * 2),
        3 => known.region_size + rng.below(3) - 1,
        4 => u64::MAX - rng.below(4),
        _ => rng.next() >> rng.below(64),
    }
}

/// An address: inside or just around the region, or anywhere.
fn address(rng: &mut Rng, known: &Known) -> u64 {
    match rng.below(4) {
        0 => known.region + rng.below(known.region_size + 2),
        1 => known.region.wrapping_sub(rng.below(16)),
        2 => 0,
        _ => rng.next(),
    }
}

fn small(rng: &mut Rng) -> u32 {
    match rng.below(4) {
        0 => 0,
        1 => 1,
        2 => rng.below(4) as u32,
        _ => rng.next() as u32,
    }
}

/// A well-formed request of a random kind (never `Exit`).
fn request(rng: &mut Rng, known: &Known) -> Request {
    let device = small(rng);
    match rng.below(19) {
        0 => Request::Hello {
            pid: std::process::id(),
            host: wire::this_host(),
        },
        1 => Request::Alloc {
            device,
            kind: small(rng),
            size: if rng.chance(70) {
                rng.below(8192)
            } else {
                size(rng, known)
            },
            at: if rng.chance(50) {
                0
            } else {
                address(rng, known)
            },
            shared: String::from_utf8_lossy(&rng.some_bytes(12)).into(),
        },
        2 => Request::Free {
            device,
            kind: small(rng),
            address: address(rng, known),
            size: size(rng, known),
        },
        3 => Request::Write {
            device,
            address: address(rng, known),
            size: size(rng, known),
        },
        4 => Request::Read {
            device,
            address: address(rng, known),
            size: size(rng, known),
        },
        5 => Request::Fill {
            device,
            address: address(rng, known),
            size: size(rng, known),
            pattern: rng.some_bytes(9),
        },
        6 => Request::LoadProgram {
            device,
            size: size(rng, known),
        },
        7 => Request::CheckImage {
            device,
            size: size(rng, known),
        },
        8 => Request::DestroyProgram {
            program: rng.next(),
        },
        9 => Request::Symbol {
            program: rng.below(8),
            kind: small(rng),
            name: String::from_utf8_lossy(&rng.some_bytes(16)).into(),
        },
        10 => Request::Launch {
            stream: if rng.chance(50) { 0 } else { rng.below(8) },
            device,
            kernel: rng.below(8),
            dimensions: small(rng),
            groups: [small(rng), small(rng), small(rng)],
            group_size: [small(rng), small(rng), small(rng)],
            dynamic_shared: size(rng, known),
            cooperative: rng.chance(50),
            c_parameters: rng.chance(50),
            arguments: rng.some_bytes(64),
        },
        11 => Request::CopyWithin {
            device,
            dst: address(rng, known),
            src: address(rng, known),
            size: size(rng, known),
        },
        12 => Request::SendTo {
            device,
            address: address(rng, known),
            size: size(rng, known),
            peer: small(rng),
        },
        13 => Request::ReceiveFrom {
            device,
            address: address(rng, known),
            size: size(rng, known),
            peer: small(rng),
        },
        14 => Request::Sync {
            stream: rng.below(8),
        },
        15 => Request::EndStream {
            stream: rng.below(8),
        },
        16 => Request::CooperativeGroups {
            kernel: rng.below(8),
            dimensions: small(rng),
            groups: [small(rng), small(rng), small(rng)],
            group_size: [small(rng), small(rng), small(rng)],
            dynamic_shared: size(rng, known),
        },
        _ => Request::WriteInline {
            device,
            address: address(rng, known),
            data: rng.some_bytes(INLINE_LIMIT + 1),
        },
    }
}

/// Flips, cuts or lengthens `bytes` (after the tag, mostly).
fn mutate(rng: &mut Rng, bytes: &mut Vec<u8>) {
    for _ in 0..=rng.below(3) {
        match rng.below(4) {
            0 if !bytes.is_empty() => {
                let at = rng.below(bytes.len() as u64) as usize;
                bytes[at] ^= 1 << rng.below(8);
            }
            1 if !bytes.is_empty() => {
                let at = rng.below(bytes.len() as u64) as usize;
                bytes[at] = rng.next() as u8;
            }
            2 => bytes.truncate(rng.below(bytes.len() as u64 + 1) as usize),
            _ => {
                let extra = rng.some_bytes(9);
                bytes.extend(extra);
            }
        }
    }
}

/// The bytes a request that the server reads as `request` makes it wait for: `Write`,
/// `LoadProgram` and `CheckImage` carry data.
fn data_expected(request: &Request) -> u64 {
    match request {
        Request::Write { size, .. }
        | Request::LoadProgram { size, .. }
        | Request::CheckImage { size, .. } => *size,
        _ => 0,
    }
}

struct Fuzzer {
    transport: Transport,
    server: i32,
    next_tag: i32,
    rng: Rng,
    known: Known,
    error_replies: u64,
    slow_cases: u64,
    /// `OFFLOAD_FUZZ_LOG=N`: every request from the Nth execution on is printed before it
    /// goes.
    log: Option<u64>,
    /// Executions so far.
    count: u64,
    /// The next request with data gets none.
    slow_due: bool,
    /// Every how many executions that is.
    slow_every: u64,
}

/// How many executions of a run leave the server waiting for data that never comes
/// (each costs the liveness timeout), spread evenly.
const SLOW_CASES: u64 = 20;

impl Fuzzer {
    fn tag(&mut self) -> i32 {
        self.next_tag = if self.next_tag >= 1 << 22 {
            FIRST_OPERATION_TAG
        } else {
            self.next_tag + 1
        };
        self.next_tag
    }

    /// A well-formed exchange of the fuzzer's own (set-up, checks): its reply.
    fn ask(&mut self, request: &Request, data: &[u8]) -> Result<Reply, String> {
        let tag = self.tag();
        let t = &self.transport;
        t.send(self.server, TAG_REQUEST, &wire::envelope(tag, request))
            .map_err(String::from)?;
        if !data.is_empty() {
            t.send(self.server, tag, data).map_err(String::from)?;
        }
        let bytes = t.receive(self.server, tag, Wait::Within(Duration::from_secs(10)));
        Reply::decode(&bytes.map_err(String::from)?).map_err(|e| e.0)
    }

    /// One execution; an error says how the server failed.
    fn execute(&mut self) -> Result<(), String> {
        self.count += 1;
        self.slow_due |= self.count % self.slow_every == 0;
        let tag = self.tag();
        let kind = self.rng.below(100);
        let mut bytes = if kind < 15 {
            let mut b = self.rng.some_bytes(48);
            if b.len() >= 4 && self.rng.chance(80) {
                b[..4].copy_from_slice(&tag.to_le_bytes());
            }
            b
        } else {
            let request = request(&mut self.rng, &self.known);
            wire::envelope(tag, &request).to_vec()
        };
        if kind >= 15 && self.rng.chance(30) {
            let body = bytes.split_off(4.min(bytes.len()));
            let mut body = body;
            mutate(&mut self.rng, &mut body);
            bytes.extend(body);
        }
        // What the server will make of it.
        let (answer_tag, read) = match wire::open_envelope(&bytes) {
            Ok((t, r)) => (Some(t), Some(r)),
            Err(_) if bytes.len() >= 4 => (
                Some(i32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])),
                None,
            ),
            Err(_) => (None, None),
        };
        match &read {
            // The one request that ends the server, and freeing the region the checks
            // read: not sent.
            Some(Request::Exit) => return Ok(()),
            Some(Request::Free { address, .. }) if *address == self.known.region => return Ok(()),
            _ => {}
        }
        let answered = read
            .as_ref()
            .map_or(answer_tag.is_some(), Request::is_answered);
        // A request whose decoded tag is a control tag or collides with the fuzzer's
        // own traffic would be answered where it is not looked for: skipped.
        if answer_tag.is_some_and(|t| t < FIRST_OPERATION_TAG) {
            return Ok(());
        }
        if self.log.is_some_and(|from| self.count >= from) {
            eprintln!("fuzz {}: {:?} ({} bytes)", self.count, read, bytes.len());
        }
        let t = &self.transport;
        t.send(self.server, TAG_REQUEST, &bytes)
            .map_err(|e| format!("sending: {e}"))?;
        let expected = read.as_ref().map_or(0, data_expected);
        let data_tag = answer_tag.unwrap_or(tag);
        if expected > 0 {
            match self.rng.below(100) {
                // None at all (the server waits out its liveness timeout), or on
                // another tag: `SLOW_CASES` times a run.
                _ if self.slow_due => {
                    self.slow_due = false;
                    self.slow_cases += 1;
                    if self.rng.chance(50) {
                        let stray = (1 << 23) + data_tag; // above every exchange tag
                        t.send(self.server, stray, &[1, 2, 3])
                            .map_err(|e| format!("sending data: {e}"))?;
                    }
                }
                // The data, as asked (when not too big to make).
                0..=49 if expected <= 1 << 18 => {
                    let data = self.rng.bytes(expected as usize);
                    t.send(self.server, data_tag, &data)
                        .map_err(|e| format!("sending data: {e}"))?;
                }
                // Too much in one fragment.
                50..=64 if expected <= 1 << 18 => {
                    let extra = 1 + self.rng.below(16) as usize;
                    let data = self.rng.bytes(expected as usize + extra);
                    t.send(self.server, data_tag, &data)
                        .map_err(|e| format!("sending data: {e}"))?;
                }
                // The sender gives up: an empty fragment.
                _ => t
                    .send(self.server, data_tag, &[])
                    .map_err(|e| format!("sending data: {e}"))?,
            }
        }
        if !answered {
            return Ok(());
        }
        let Some(answer_tag) = answer_tag else {
            return Ok(());
        };
        let reply = t
            .receive(
                self.server,
                answer_tag,
                Wait::Within(Duration::from_secs(10)),
            )
            .map_err(|e| format!("no answer: {e}"))?;
        let reply = Reply::decode(&reply).map_err(|e| format!("an unreadable answer: {}", e.0))?;
        match (&reply, &read) {
            (Reply::Error { .. }, _) => self.error_replies += 1,
            // A large read's data follows its answer.
            (Reply::Done, Some(Request::Read { size, .. })) if *size > 0 => {
                let mut data = vec![0u8; *size as usize];
                t.receive_fragments(self.server, answer_tag, &mut data, 64 << 20)
                    .map_err(|e| format!("the read's data: {e}"))?;
            }
            (Reply::Value(address), Some(Request::Alloc { .. })) => {
                self.known.allocations.push(*address)
            }
            _ => {}
        }
        Ok(())
    }

    /// The fuzzer's own allocations are freed (valid requests: they must succeed).
    fn free_allocations(&mut self) -> Result<(), String> {
        // Their kinds and devices are not kept: the server frees by address and device
        // (with the size and kind it recorded), and only device 0 exists here.
        for address in std::mem::take(&mut self.known.allocations) {
            let free = Request::Free {
                device: 0,
                kind: 1,
                address,
                size: 0,
            };
            match self.ask(&free, &[])? {
                Reply::Done => {}
                // A fuzzed Free may have named it first (addresses near the region
                // reach allocations made next to it).
                Reply::Error { details, .. } if details.contains("is no allocation") => {}
                other => return Err(format!("freeing {address:#x}: {other:?}")),
            }
        }
        Ok(())
    }

    /// The server still serves well-formed requests, and the region holds what was
    /// written to it.
    fn check_alive(&mut self, pattern: &[u8]) -> Result<(), String> {
        let hello = Request::Hello {
            pid: std::process::id(),
            host: wire::this_host(),
        };
        if !matches!(self.ask(&hello, &[])?, Reply::Devices(_)) {
            return Err("Hello got no device list".into());
        }
        let read = Request::Read {
            device: 0,
            address: self.known.region,
            size: INLINE_LIMIT,
        };
        match self.ask(&read, &[])? {
            Reply::Data(d) if d == pattern[..INLINE_LIMIT as usize] => Ok(()),
            other => Err(format!("the region's first bytes changed: {:?}", other)),
        }
    }
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let executions: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let seed: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    }) | 1;
    let timeout = offload::plugins::remote::settings::timeout();
    let transport = match Transport::open(timeout) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("offload-mpi-fuzz: {e}");
            return ExitCode::from(2);
        }
    };
    if transport.size() != 2 || transport.rank() != 1 {
        eprintln!(
            "offload-mpi-fuzz: run as mpirun -np 1 offload-mpi-device : -np 1 offload-mpi-fuzz"
        );
        return ExitCode::from(2);
    }
    let mut fuzzer = Fuzzer {
        transport,
        server: 0,
        next_tag: FIRST_OPERATION_TAG,
        rng: Rng(seed),
        known: Known {
            region: 0,
            region_size: 1 << 16,
            allocations: Vec::new(),
        },
        error_replies: 0,
        slow_cases: 0,
        log: std::env::var("OFFLOAD_FUZZ_LOG")
            .ok()
            .map(|v| v.trim().parse().unwrap_or(0)),
        count: 0,
        slow_due: false,
        slow_every: (executions / SLOW_CASES).max(1000),
    };
    let outcome = (|| -> Result<(), String> {
        let alloc = Request::Alloc {
            device: 0,
            kind: 1,
            size: fuzzer.known.region_size,
            at: 0,
            shared: String::new(),
        };
        let Reply::Value(region) = fuzzer.ask(&alloc, &[])? else {
            return Err("no region".into());
        };
        fuzzer.known.region = region;
        // The region's first bytes are a pattern no fuzzed request may change: requests
        // write only past them (those that name the region write anywhere in it, so the
        // pattern is checked against what the server reads back, then written again).
        let pattern: Vec<u8> = (0..INLINE_LIMIT).map(|i| (i * 7 + 3) as u8).collect();
        let write = Request::WriteInline {
            device: 0,
            address: region,
            data: pattern.clone(),
        };
        fuzzer.ask(&write, &[])?;
        let started = Instant::now();
        for i in 0..executions {
            if let Err(e) = fuzzer.execute() {
                return Err(format!("execution {i} (seed {seed}): {e}"));
            }
            if i % 1000 == 999 {
                // Fuzzed writes may land in the region: rewrite it, then check a
                // well-formed read returns exactly that.
                fuzzer.ask(&write, &[])?;
                fuzzer.check_alive(&pattern)?;
                if fuzzer.known.allocations.len() > 64 {
                    fuzzer.free_allocations()?;
                }
            }
        }
        fuzzer.free_allocations()?;
        fuzzer.ask(&write, &[])?;
        fuzzer.check_alive(&pattern)?;
        println!(
            "offload-mpi-fuzz: {executions} executions in {:.1} s (seed {seed}): {} error replies, {} waits on missing data, 0 crashes, 0 hangs",
            started.elapsed().as_secs_f64(),
            fuzzer.error_replies,
            fuzzer.slow_cases
        );
        match fuzzer.ask(&Request::Exit, &[])? {
            Reply::Done => Ok(()),
            other => Err(format!("Exit answered {other:?}")),
        }
    })();
    let code = match outcome {
        Ok(()) => 0,
        Err(e) => {
            println!("offload-mpi-fuzz: FAILED: {e}");
            1
        }
    };
    let transport = fuzzer.transport;
    if !transport.close(timeout) {
        eprintln!("offload-mpi-fuzz: MPI_Finalize did not return in time");
    }
    ExitCode::from(code)
}
