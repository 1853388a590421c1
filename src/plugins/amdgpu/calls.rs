//! Safe wrappers of the HSA entry points: each checks the status and turns the C out
//! parameters into Rust values. Queue and signal calls on the launch path are thin (no
//! allocation, no lock).

use super::ffi::*;
use super::hsa::Hsa;
use crate::plugin::foundation::error::{Error, Result};
use std::ffi::{c_int, c_void, CString};

/// Collects what an iteration callback is given, into the `Vec` its data points to.
unsafe extern "C" fn push<T>(item: T, data: *mut c_void) -> HsaStatus {
    // SAFETY: every iteration below passes a `&mut Vec<T>` of this `T` as `data`.
    unsafe { (*(data as *mut Vec<T>)).push(item) };
    STATUS_SUCCESS
}

/// A fixed-size, NUL-padded C string of an info query as a `String`.
fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(crate::image::before_nul(bytes))
        .trim()
        .to_owned()
}

impl Hsa {
    pub fn agents(&self) -> Result<Vec<Agent>> {
        let mut all: Vec<Agent> = Vec::new();
        // SAFETY: `push::<Agent>` matches the callback type and `all` outlives the call.
        let s = unsafe {
            (self.f.iterate_agents)(push::<Agent>, &mut all as *mut Vec<Agent> as *mut c_void)
        };
        self.check(s, "hsa_iterate_agents").map(|()| all)
    }

    /// Reads an agent attribute into `out`, whose size must be the attribute's.
    fn agent_raw(&self, agent: Agent, attribute: u32, out: *mut c_void) -> Result<()> {
        // SAFETY: callers pass a buffer of the size hsa.h gives the attribute.
        let s = unsafe { (self.f.agent_get_info)(agent, attribute, out) };
        self.check(s, &format!("hsa_agent_get_info(0x{attribute:x})"))
    }

    pub fn agent_u32(&self, agent: Agent, attribute: u32) -> Result<u32> {
        let mut v = 0u32;
        self.agent_raw(agent, attribute, &mut v as *mut u32 as *mut c_void)
            .map(|()| v)
    }

    pub fn agent_u16x3(&self, agent: Agent, attribute: u32) -> Result<[u16; 3]> {
        let mut v = [0u16; 3];
        self.agent_raw(agent, attribute, v.as_mut_ptr() as *mut c_void)
            .map(|()| v)
    }

    pub fn agent_dim3(&self, agent: Agent, attribute: u32) -> Result<Dim3> {
        let mut v = Dim3::default();
        self.agent_raw(agent, attribute, &mut v as *mut Dim3 as *mut c_void)
            .map(|()| v)
    }

    pub fn agent_cache_sizes(&self, agent: Agent) -> Result<[u32; 4]> {
        let mut v = [0u32; 4];
        self.agent_raw(agent, agent_info::CACHE_SIZE, v.as_mut_ptr() as *mut c_void)
            .map(|()| v)
    }

    /// The 64-byte string attributes (name, vendor, product name) and the 21-byte UUID.
    pub fn agent_string(&self, agent: Agent, attribute: u32) -> Result<String> {
        let mut v = [0u8; 64];
        self.agent_raw(agent, attribute, v.as_mut_ptr() as *mut c_void)
            .map(|()| text(&v))
    }

    /// The agent's ISA names, e.g. "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-".
    pub fn agent_isa_names(&self, agent: Agent) -> Result<Vec<String>> {
        let mut isas: Vec<Isa> = Vec::new();
        // SAFETY: as in `agents`.
        let s = unsafe {
            (self.f.agent_iterate_isas)(
                agent,
                push::<Isa>,
                &mut isas as *mut Vec<Isa> as *mut c_void,
            )
        };
        self.check(s, "hsa_agent_iterate_isas")?;
        let mut names = Vec::with_capacity(isas.len());
        for isa in isas {
            let mut len = 0u32;
            // SAFETY: NAME_LENGTH is a uint32_t.
            let s = unsafe {
                (self.f.isa_get_info_alt)(
                    isa,
                    ISA_INFO_NAME_LENGTH,
                    &mut len as *mut u32 as *mut c_void,
                )
            };
            self.check(s, "hsa_isa_get_info_alt(NAME_LENGTH)")?;
            let mut name = vec![0u8; len as usize + 1];
            // SAFETY: NAME writes NAME_LENGTH bytes; the buffer has one more.
            let s = unsafe {
                (self.f.isa_get_info_alt)(isa, ISA_INFO_NAME, name.as_mut_ptr() as *mut c_void)
            };
            self.check(s, "hsa_isa_get_info_alt(NAME)")?;
            names.push(text(&name));
        }
        Ok(names)
    }

    pub fn pools(&self, agent: Agent) -> Result<Vec<MemoryPool>> {
        let mut all: Vec<MemoryPool> = Vec::new();
        // SAFETY: as in `agents`.
        let s = unsafe {
            (self.f.iterate_memory_pools)(
                agent,
                push::<MemoryPool>,
                &mut all as *mut Vec<MemoryPool> as *mut c_void,
            )
        };
        self.check(s, "hsa_amd_agent_iterate_memory_pools")
            .map(|()| all)
    }

    fn pool_raw(&self, pool: MemoryPool, attribute: u32, out: *mut c_void) -> Result<()> {
        // SAFETY: callers pass a buffer of the size hsa_ext_amd.h gives the attribute.
        let s = unsafe { (self.f.memory_pool_get_info)(pool, attribute, out) };
        self.check(s, &format!("hsa_amd_memory_pool_get_info({attribute})"))
    }

    /// SEGMENT and GLOBAL_FLAGS (uint32_t-sized enums).
    pub fn pool_u32(&self, pool: MemoryPool, attribute: u32) -> Result<u32> {
        let mut v = 0u32;
        self.pool_raw(pool, attribute, &mut v as *mut u32 as *mut c_void)
            .map(|()| v)
    }

    /// SIZE, RUNTIME_ALLOC_GRANULE, ALLOC_MAX_SIZE (size_t).
    pub fn pool_usize(&self, pool: MemoryPool, attribute: u32) -> Result<usize> {
        let mut v = 0usize;
        self.pool_raw(pool, attribute, &mut v as *mut usize as *mut c_void)
            .map(|()| v)
    }

    /// RUNTIME_ALLOC_ALLOWED (bool).
    pub fn pool_bool(&self, pool: MemoryPool, attribute: u32) -> Result<bool> {
        let mut v = false;
        self.pool_raw(pool, attribute, &mut v as *mut bool as *mut c_void)
            .map(|()| v)
    }

    pub fn pool_allocate(&self, pool: MemoryPool, size: usize) -> Result<usize> {
        let mut ptr: *mut c_void = std::ptr::null_mut();
        // SAFETY: `ptr` receives the allocation; flags 0 is the only defined value.
        let s = unsafe { (self.f.memory_pool_allocate)(pool, size.max(1), 0, &mut ptr) };
        self.check(s, "hsa_amd_memory_pool_allocate")
            .map(|()| ptr as usize)
    }

    pub fn pool_free(&self, addr: usize) -> Result<()> {
        // SAFETY: `addr` came from hsa_amd_memory_pool_allocate (the caller's contract).
        let s = unsafe { (self.f.memory_pool_free)(addr as *mut c_void) };
        self.check(s, "hsa_amd_memory_pool_free")
    }

    /// Whether `agent` can ever reach `pool` (directly or once allowed).
    pub fn can_reach(&self, agent: Agent, pool: MemoryPool) -> bool {
        let mut access = POOL_ACCESS_NEVER_ALLOWED;
        // SAFETY: ACCESS is a uint32_t-sized enum.
        let s = unsafe {
            (self.f.agent_memory_pool_get_info)(
                agent,
                pool,
                AGENT_POOL_INFO_ACCESS,
                &mut access as *mut u32 as *mut c_void,
            )
        };
        s == STATUS_SUCCESS && access != POOL_ACCESS_NEVER_ALLOWED
    }

    /// Lets every agent of `agents` reach the allocation at `addr`.
    pub fn allow_access(&self, agents: &[Agent], addr: usize) -> Result<()> {
        if agents.is_empty() {
            return Ok(());
        }
        // SAFETY: the agents array is valid for the call; flags must be NULL.
        let s = unsafe {
            (self.f.agents_allow_access)(
                agents.len() as u32,
                agents.as_ptr(),
                std::ptr::null(),
                addr as *const c_void,
            )
        };
        self.check(s, "hsa_amd_agents_allow_access")
    }

    /// Starts a copy that waits for `deps` and decrements `completion` when done.
    #[allow(clippy::too_many_arguments)]
    pub fn async_copy(
        &self,
        dst: usize,
        dst_agent: Agent,
        src: usize,
        src_agent: Agent,
        size: usize,
        deps: &[Signal],
        completion: Signal,
    ) -> Result<()> {
        // SAFETY: the addresses are device-accessible memory of `size` bytes (the
        // stream's contract: pool memory, locked host memory or a staging buffer), kept
        // alive until `completion` reaches 0 by the stream's completion actions.
        let s = unsafe {
            (self.f.memory_async_copy)(
                dst as *mut c_void,
                dst_agent,
                src as *const c_void,
                src_agent,
                size,
                deps.len() as u32,
                if deps.is_empty() {
                    std::ptr::null()
                } else {
                    deps.as_ptr()
                },
                completion,
            )
        };
        self.check(s, "hsa_amd_memory_async_copy")
    }

    /// Page-locks host memory for `agents`; the address they use for it.
    pub fn lock(&self, addr: usize, size: usize, agents: &[Agent]) -> Result<usize> {
        let mut agent_ptr: *mut c_void = std::ptr::null_mut();
        let mut agents = agents.to_vec();
        // SAFETY: `addr..addr+size` is the caller's host memory; the agents array is
        // valid for the call.
        let s = unsafe {
            (self.f.memory_lock)(
                addr as *mut c_void,
                size,
                agents.as_mut_ptr(),
                agents.len() as c_int,
                &mut agent_ptr,
            )
        };
        self.check(s, "hsa_amd_memory_lock")
            .map(|()| agent_ptr as usize)
    }

    pub fn unlock(&self, addr: usize) -> Result<()> {
        // SAFETY: unlocking an address that was not locked is an error status, not UB.
        let s = unsafe { (self.f.memory_unlock)(addr as *mut c_void) };
        self.check(s, "hsa_amd_memory_unlock")
    }

    /// Fills `count` 32-bit words at `addr` (4-byte aligned) with `value`; returns when done.
    pub fn fill_u32(&self, addr: usize, value: u32, count: usize) -> Result<()> {
        // SAFETY: the caller's device memory of `count * 4` bytes.
        let s = unsafe { (self.f.memory_fill)(addr as *mut c_void, value, count) };
        self.check(s, "hsa_amd_memory_fill")
    }

    /// A synchronous copy between any memory the runtime can reach.
    pub fn copy(&self, dst: usize, src: usize, size: usize) -> Result<()> {
        // SAFETY: both ranges are the caller's valid memory of `size` bytes.
        let s = unsafe { (self.f.memory_copy)(dst as *mut c_void, src as *const c_void, size) };
        self.check(s, "hsa_memory_copy")
    }

    /// Whether the runtime knows all of `addr..addr + size` (pool, locked or IPC
    /// memory): such host memory can be copied asynchronously as it is; unknown memory
    /// is pageable.
    pub fn is_known_memory(&self, addr: usize, size: usize) -> bool {
        let mut info = PointerInfo {
            size: std::mem::size_of::<PointerInfo>() as u32,
            pointer_type: POINTER_TYPE_UNKNOWN,
            agent_base_address: std::ptr::null_mut(),
            host_base_address: std::ptr::null_mut(),
            size_in_bytes: 0,
            user_data: std::ptr::null_mut(),
            agent_owner: Agent::default(),
            global_flags: 0,
        };
        // SAFETY: `info.size` is set as the header requires; no accessible-agent list is
        // asked for (NULL allocator and outputs).
        let s = unsafe {
            (self.f.pointer_info)(
                addr as *const c_void,
                &mut info,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        if s != STATUS_SUCCESS || info.pointer_type == POINTER_TYPE_UNKNOWN {
            return false;
        }
        // Where the runtime says how far the block goes, the range must lie inside it.
        let base = info.host_base_address as usize;
        base == 0
            || info.size_in_bytes == 0
            || (addr >= base && addr.saturating_add(size) <= base + info.size_in_bytes)
    }

    pub fn signal_create(&self, initial: SignalValue) -> Result<Signal> {
        let mut signal = Signal::default();
        // SAFETY: no consumer list (any agent may wait); `signal` receives the handle.
        let s = unsafe { (self.f.signal_create)(initial, 0, std::ptr::null(), &mut signal) };
        self.check(s, "hsa_signal_create").map(|()| signal)
    }

    pub fn signal_destroy(&self, signal: Signal) {
        // SAFETY: the signal is ours and nothing waits on it any more (pool's contract).
        let _ = unsafe { (self.f.signal_destroy)(signal) };
    }

    pub fn signal_store_relaxed(&self, signal: Signal, value: SignalValue) {
        // SAFETY: a valid signal handle.
        unsafe { (self.f.signal_store_relaxed)(signal, value) }
    }

    pub fn signal_store_release(&self, signal: Signal, value: SignalValue) {
        // SAFETY: a valid signal handle.
        unsafe { (self.f.signal_store_screlease)(signal, value) }
    }

    pub fn signal_load(&self, signal: Signal) -> SignalValue {
        // SAFETY: a valid signal handle.
        unsafe { (self.f.signal_load_scacquire)(signal) }
    }

    /// Waits up to about `timeout_ns` for the value to fall below `value`; the value seen.
    pub fn signal_wait_below(
        &self,
        signal: Signal,
        value: SignalValue,
        timeout_ns: u64,
    ) -> SignalValue {
        // SAFETY: a valid signal handle; the timeout is a hint, the call may return early.
        unsafe {
            (self.f.signal_wait_scacquire)(
                signal,
                SIGNAL_CONDITION_LT,
                value,
                timeout_ns,
                WAIT_STATE_BLOCKED,
            )
        }
    }

    /// Calls `handler(value, data)` on the runtime's thread once `signal` < `value`.
    ///
    /// # Safety
    /// `data` must stay valid until the handler has run, and the handler must return
    /// `false` (called once).
    pub unsafe fn signal_when_below(
        &self,
        signal: Signal,
        value: SignalValue,
        handler: SignalHandler,
        data: *mut c_void,
    ) -> Result<()> {
        // SAFETY: the caller's contract.
        let s = unsafe {
            (self.f.signal_async_handler)(signal, SIGNAL_CONDITION_LT, value, handler, data)
        };
        self.check(s, "hsa_amd_signal_async_handler")
    }

    /// Loads `image` (a code object) for `agent` into a new frozen, validated executable.
    pub fn load_executable(&self, agent: Agent, image: &[u8]) -> Result<Executable> {
        let mut reader = CodeObjectReader::default();
        // SAFETY: the runtime reads `image` during the call and the load below, both
        // before `image` goes away; the reader is destroyed before returning.
        let s = unsafe {
            (self.f.code_object_reader_create_from_memory)(
                image.as_ptr() as *const c_void,
                image.len(),
                &mut reader,
            )
        };
        self.check(s, "hsa_code_object_reader_create_from_memory")?;
        let loaded = self.load_with_reader(agent, reader);
        // SAFETY: the reader is ours and no longer used.
        let _ = unsafe { (self.f.code_object_reader_destroy)(reader) };
        loaded
    }

    fn load_with_reader(&self, agent: Agent, reader: CodeObjectReader) -> Result<Executable> {
        let mut exe = Executable::default();
        // SAFETY: NULL options; `exe` receives the handle.
        let s = unsafe {
            (self.f.executable_create_alt)(
                PROFILE_FULL,
                ROUNDING_MODE_DEFAULT,
                std::ptr::null(),
                &mut exe,
            )
        };
        self.check(s, "hsa_executable_create_alt")?;
        let built = (|| {
            let mut loaded = LoadedCodeObject::default();
            // SAFETY: live executable, agent and reader; NULL options.
            let s = unsafe {
                (self.f.executable_load_agent_code_object)(
                    exe,
                    agent,
                    reader,
                    std::ptr::null(),
                    &mut loaded,
                )
            };
            self.check(s, "hsa_executable_load_agent_code_object")?;
            // SAFETY: a live executable; NULL options.
            let s = unsafe { (self.f.executable_freeze)(exe, std::ptr::null()) };
            self.check(s, "hsa_executable_freeze")?;
            let mut result = 0u32;
            // SAFETY: `result` receives the validation result.
            let s = unsafe { (self.f.executable_validate)(exe, &mut result) };
            self.check(s, "hsa_executable_validate")?;
            if result != 0 {
                return Err(Error::invalid_binary(format!(
                    "hsa_executable_validate reports the executable invalid (result {result})"
                )));
            }
            Ok(())
        })();
        match built {
            Ok(()) => Ok(exe),
            Err(e) => {
                self.destroy_executable(exe);
                Err(e)
            }
        }
    }

    pub fn destroy_executable(&self, exe: Executable) {
        // SAFETY: the executable is ours; no kernel of it runs (the program's contract).
        let _ = unsafe { (self.f.executable_destroy)(exe) };
    }

    /// The named symbol for `agent`, `None` when the executable has none.
    pub fn symbol(&self, exe: Executable, agent: Agent, name: &str) -> Option<ExecutableSymbol> {
        let name = CString::new(name).ok()?;
        let mut symbol = ExecutableSymbol::default();
        // SAFETY: NUL-terminated name, live executable and agent.
        let s = unsafe {
            (self.f.executable_get_symbol_by_name)(exe, name.as_ptr(), &agent, &mut symbol)
        };
        (s == STATUS_SUCCESS).then_some(symbol)
    }

    fn symbol_raw(&self, symbol: ExecutableSymbol, attribute: u32, out: *mut c_void) -> Result<()> {
        // SAFETY: callers pass a buffer of the size hsa.h gives the attribute.
        let s = unsafe { (self.f.executable_symbol_get_info)(symbol, attribute, out) };
        self.check(s, &format!("hsa_executable_symbol_get_info({attribute})"))
    }

    /// TYPE and the uint32_t kernel segment sizes.
    pub fn symbol_u32(&self, symbol: ExecutableSymbol, attribute: u32) -> Result<u32> {
        let mut v = 0u32;
        self.symbol_raw(symbol, attribute, &mut v as *mut u32 as *mut c_void)
            .map(|()| v)
    }

    /// KERNEL_OBJECT and VARIABLE_ADDRESS (uint64_t).
    pub fn symbol_u64(&self, symbol: ExecutableSymbol, attribute: u32) -> Result<u64> {
        let mut v = 0u64;
        self.symbol_raw(symbol, attribute, &mut v as *mut u64 as *mut c_void)
            .map(|()| v)
    }

    pub fn symbol_bool(&self, symbol: ExecutableSymbol, attribute: u32) -> Result<bool> {
        let mut v = false;
        self.symbol_raw(symbol, attribute, &mut v as *mut bool as *mut c_void)
            .map(|()| v)
    }

    /// A queue of `size` packets on `agent`; `on_error(status, queue, data)` is called
    /// by the runtime when a packet fails.
    ///
    /// # Safety
    /// `data` must be what `on_error` expects and stay valid until the queue is destroyed.
    pub unsafe fn queue_create(
        &self,
        agent: Agent,
        size: u32,
        on_error: QueueErrorCallback,
        data: *mut c_void,
    ) -> Result<*mut Queue> {
        let mut queue: *mut Queue = std::ptr::null_mut();
        // SAFETY: `data` is valid for the queue's life (the caller's contract); segment
        // sizes u32::MAX mean "the runtime's default".
        let s = unsafe {
            (self.f.queue_create)(
                agent,
                size,
                QUEUE_TYPE_MULTI,
                Some(on_error),
                data,
                u32::MAX,
                u32::MAX,
                &mut queue,
            )
        };
        self.check(s, "hsa_queue_create").map(|()| queue)
    }

    /// Ticks per second of the timestamps in profiling records.
    pub fn timestamp_frequency(&self) -> Result<u64> {
        let mut v = 0u64;
        // SAFETY: TIMESTAMP_FREQUENCY is a uint64_t.
        let s = unsafe {
            (self.f.system_get_info)(
                system_info::TIMESTAMP_FREQUENCY,
                &mut v as *mut u64 as *mut c_void,
            )
        };
        self.check(s, "hsa_system_get_info(TIMESTAMP_FREQUENCY)")?;
        if v == 0 {
            return Err(Error::backend_failure(
                "the HSA runtime reports a timestamp frequency of 0",
            ));
        }
        Ok(v)
    }

    /// When the packet that completes `signal` started and ended (queue profiling on).
    pub fn dispatch_time(&self, agent: Agent, signal: Signal) -> Result<DispatchTime> {
        let mut t = DispatchTime::default();
        // SAFETY: a valid agent and signal; `t` receives the record.
        let s = unsafe { (self.f.profiling_get_dispatch_time)(agent, signal, &mut t) };
        self.check(s, "hsa_amd_profiling_get_dispatch_time")
            .map(|()| t)
    }
}
