//! The global constructors and destructors of a GPU image (C++ globals in device code),
//! shared by the GPU backends; the runtime calls them when it creates and destroys a
//! program.
//! The compiler leaves them to the runtime, as LLVM's GPU plugins expect: an AMDGPU code
//! object has kernels `amdgcn.device.init` / `.fini` that walk arrays the linker built;
//! an NVPTX image has kernels `nvptx$device$init` / `$fini`, but no linker arrays, only
//! one global per function (`__init_array_object_<function>_<hash>_<priority>`) holding
//! its address. For NVPTX the runtime builds the array in priority order in device
//! memory and points `__init_array_start` / `__init_array_end` at it. The init kernel
//! runs when the program is created and the fini kernel when it is destroyed (or at
//! shutdown), each on one thread, as LLVM's plugins launch them (and LLVM 22's
//! `olCreateProgram`).

use crate::plugin::foundation::error::{Error, Result};
use crate::plugin::{self, AllocKind, Backend, KernelArgs, LaunchConfig, SymbolKind};

/// Which toolchain convention the image follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Convention {
    Amdgcn,
    Nvptx,
}

impl Convention {
    fn of(backend: Backend) -> Option<Convention> {
        match backend {
            Backend::Amdgpu => Some(Convention::Amdgcn),
            Backend::Cuda => Some(Convention::Nvptx),
            _ => None,
        }
    }

    fn kernel(self, init: bool) -> &'static str {
        match (self, init) {
            (Convention::Amdgcn, true) => "amdgcn.device.init",
            (Convention::Amdgcn, false) => "amdgcn.device.fini",
            (Convention::Nvptx, true) => "nvptx$device$init",
            (Convention::Nvptx, false) => "nvptx$device$fini",
        }
    }
}

/// What a loaded image still owes at its end: its destructors, with what they need.
pub struct Destructors {
    convention: Convention,
    /// The NVPTX function-pointer arrays made in device memory (address, bytes).
    arrays: Vec<(usize, usize)>,
    /// The `__fini_array_object_*` names, for NVPTX.
    fini_objects: Vec<String>,
}

/// Runs `program`'s constructors on `device` (of `backend`) and returns what its
/// destructors need, or `None` when it has none. `image` is the image as loaded (an ELF
/// object or PTX text: the NVPTX arrays' names are read from it).
pub fn construct(
    backend: Backend,
    device: &dyn plugin::Device,
    program: &dyn plugin::Program,
    image: &[u8],
) -> Result<Option<Destructors>> {
    let Some(convention) = Convention::of(backend) else {
        return Ok(None);
    };
    let named = may_define(image, [convention.kernel(true), convention.kernel(false)]);
    let has = |init: bool, named: bool| {
        named && program.symbol_kind(convention.kernel(init)) == Some(SymbolKind::Kernel)
    };
    let (has_init, has_fini) = (has(true, named[0]), has(false, named[1]));
    if !has_init && !has_fini {
        return Ok(None);
    }
    let mut owed = Destructors {
        convention,
        arrays: Vec::new(),
        fini_objects: Vec::new(),
    };
    if convention == Convention::Nvptx {
        let names = array_objects(image);
        owed.fini_objects = ordered(&names, "__fini_array_object_")?;
        if has_init {
            let inits = ordered(&names, "__init_array_object_")?;
            let array = build_array(device, program, &inits, "__init_array")?;
            owed.arrays.extend(array);
        }
    }
    if has_init {
        let result = run_kernel(device, program, convention.kernel(true));
        if let Err(e) = result {
            owed.release(device);
            return Err(e.context("running the image's global constructors"));
        }
    }
    if has_fini {
        Ok(Some(owed))
    } else {
        owed.release(device);
        Ok(None)
    }
}

impl Destructors {
    /// Runs the destructors, then frees the arrays.
    pub fn run(mut self, device: &dyn plugin::Device, program: &dyn plugin::Program) -> Result<()> {
        let result = self.run_kernel(device, program);
        self.release(device);
        result.map_err(|e| e.context("running the image's global destructors"))
    }

    fn run_kernel(
        &mut self,
        device: &dyn plugin::Device,
        program: &dyn plugin::Program,
    ) -> Result<()> {
        if self.convention == Convention::Nvptx {
            let names = std::mem::take(&mut self.fini_objects);
            let array = build_array(device, program, &names, "__fini_array")?;
            self.arrays.extend(array);
        }
        run_kernel(device, program, self.convention.kernel(false))
    }

    fn release(&mut self, device: &dyn plugin::Device) {
        for (address, size) in self.arrays.drain(..) {
            if let Err(e) = device.free(address, size, AllocKind::Device) {
                plugin::foundation::flags::trace(|| format!("freeing a constructor array: {e}"));
            }
        }
    }
}

/// Whether `image` may define each of `names`. An ELF image's symbol table says, and so
/// does PTX text, which names every kernel it defines; anything else (a fatbin, say) may,
/// and the driver is asked. Asking the driver for a name the module lacks costs two
/// failed lookups (a function, then a global), each with the context made current, on
/// every load of an image without constructors. The image is read once for all names.
fn may_define<const N: usize>(image: &[u8], names: [&str; N]) -> [bool; N] {
    use crate::image::{before_nul, contains_bytes, ImageFormat};
    match crate::image::detect_format(image) {
        ImageFormat::Elf => match crate::image::symbol_names(image) {
            Ok(symbols) => names.map(|name| symbols.iter().any(|s| s == name)),
            Err(_) => [true; N],
        },
        ImageFormat::CudaPtx => {
            let text = before_nul(image);
            names.map(|name| contains_bytes(text, name.as_bytes()))
        }
        _ => [true; N],
    }
}

/// The names in `image` that start with `__init_array_object_` or
/// `__fini_array_object_`, in the image's order: the ELF symbol table's, or for PTX text
/// the order of their declarations.
fn array_objects(image: &[u8]) -> Vec<String> {
    let wanted = |name: &str| {
        name.starts_with("__init_array_object_") || name.starts_with("__fini_array_object_")
    };
    if let Ok(mut names) = crate::image::symbol_names(image) {
        names.retain(|name| wanted(name));
        return names;
    }
    let text = String::from_utf8_lossy(image);
    let mut names: Vec<String> = Vec::new();
    for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$')) {
        if wanted(word) && !names.iter().any(|n| n == word) {
            names.push(word.to_string());
        }
    }
    names
}

/// The names with `prefix`, sorted by the priority their name ends with (`_<priority>`);
/// names of the same priority keep the image's order.
fn ordered(names: &[String], prefix: &str) -> Result<Vec<String>> {
    let mut found: Vec<(u16, String)> = Vec::new();
    for name in names.iter().filter(|n| n.starts_with(prefix)) {
        let priority = name
            .rsplit('_')
            .next()
            .and_then(|p| p.parse::<u16>().ok())
            .ok_or_else(|| {
                Error::invalid_binary(format!(
                    "'{name}' does not end with a constructor priority (_0 to _65535)"
                ))
            })?;
        found.push((priority, name.clone()));
    }
    found.sort_by_key(|(priority, _)| *priority);
    Ok(found.into_iter().map(|(_, name)| name).collect())
}

/// Reads each named global (a function address), stores the addresses in a new device
/// array, and points `<bounds>_start` / `<bounds>_end` at it. Returns the array to free.
fn build_array(
    device: &dyn plugin::Device,
    program: &dyn plugin::Program,
    names: &[String],
    bounds: &str,
) -> Result<Option<(usize, usize)>> {
    let mut addresses: Vec<u64> = Vec::with_capacity(names.len());
    for name in names {
        let global = program.global(name)?;
        let mut value = [0u8; 8];
        let size = global.size.min(8);
        device.copy_from_device(value.as_mut_ptr() as usize, global.address, size)?;
        addresses.push(u64::from_ne_bytes(value));
    }
    let bytes: Vec<u8> = addresses.iter().flat_map(|a| a.to_ne_bytes()).collect();
    let array = if bytes.is_empty() {
        None
    } else {
        let address = device.allocate(bytes.len(), AllocKind::Device)?;
        let written = device.copy_to_device(address, bytes.as_ptr() as usize, bytes.len());
        if let Err(e) = written {
            let _ = device.free(address, bytes.len(), AllocKind::Device);
            return Err(e);
        }
        Some((address, bytes.len()))
    };
    let (start, end) = array.map_or((0, 0), |(a, n)| (a as u64, (a + n) as u64));
    for (suffix, value) in [("_start", start), ("_end", end)] {
        let global = program.global(&format!("{bounds}{suffix}"));
        let written = global.and_then(|g| {
            let bytes = value.to_ne_bytes();
            device.copy_to_device(g.address, bytes.as_ptr() as usize, g.size.min(8))
        });
        if let Err(e) = written {
            if let Some((address, size)) = array {
                let _ = device.free(address, size, AllocKind::Device);
            }
            return Err(e);
        }
    }
    Ok(array)
}

/// Launches the named kernel on one thread of one group and waits for it.
fn run_kernel(
    device: &dyn plugin::Device,
    program: &dyn plugin::Program,
    name: &str,
) -> Result<()> {
    let kernel = program.kernel(name)?;
    let config = LaunchConfig::new(1, [1, 1, 1], [1, 1, 1], 0, false);
    plugin::launch_now(device, &kernel, &config, &KernelArgs::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn arrays_follow_priority_then_image_order() {
        let found = names(&[
            "__init_array_object__GLOBAL__sub_I_a_88f7_65535",
            "__init_array_object__GLOBAL__I_000200_88f7_200",
            "__fini_array_object___dtor_late_88f7_65535",
            "__init_array_object__GLOBAL__I_000101_88f7_101",
            "__init_array_object_second_88f7_65535",
        ]);
        assert_eq!(
            ordered(&found, "__init_array_object_").unwrap(),
            names(&[
                "__init_array_object__GLOBAL__I_000101_88f7_101",
                "__init_array_object__GLOBAL__I_000200_88f7_200",
                "__init_array_object__GLOBAL__sub_I_a_88f7_65535",
                "__init_array_object_second_88f7_65535",
            ])
        );
        assert_eq!(
            ordered(&found, "__fini_array_object_").unwrap(),
            names(&["__fini_array_object___dtor_late_88f7_65535"])
        );
    }

    #[test]
    fn a_name_without_a_priority_is_refused() {
        let e = ordered(
            &names(&["__init_array_object_f_70000"]),
            "__init_array_object_",
        )
        .unwrap_err();
        assert!(e.details.contains("priority"), "{}", e.details);
    }

    #[test]
    fn only_images_that_may_name_a_kernel_are_asked_about_it() {
        let ptx = b".version 7.0\n.target sm_80\n.address_size 64\n\
            .visible .entry nvptx$device$init()\n{\n\tret;\n}\n";
        let both = ["nvptx$device$init", "nvptx$device$fini"];
        assert_eq!(may_define(ptx, both), [true, false]);
        let plain = b".version 7.0\n.target sm_80\n.address_size 64\n";
        assert_eq!(may_define(plain, both), [false, false]);
        // Bytes whose names cannot be read (a fatbin, compressed): the driver is asked.
        assert_eq!(
            may_define(&[0x50, 0xed, 0x55, 0xba, 1, 0, 0x10, 0], both),
            [true, true]
        );
    }

    #[test]
    fn ptx_text_names_are_found_once_in_order() {
        let ptx = b".visible .global .align 8 .u64 __init_array_object_g_1_65535 = g;\n\
            .visible .global .align 8 .u64 __fini_array_object_d_1_65535 = d;\n\
            ld.global.u64 %rd1, [__init_array_object_g_1_65535];";
        assert_eq!(
            array_objects(ptx),
            names(&[
                "__init_array_object_g_1_65535",
                "__fini_array_object_d_1_65535"
            ])
        );
    }
}
