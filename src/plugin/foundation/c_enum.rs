//! Rust mirrors of the C header's enumerations, declared once: the variants with their C
//! values, from which the enum, its list of variants and its checked conversion from the
//! C integer (`TryFrom<u32>`, the value back as the error when no variant has it) follow.

/// Declares a fieldless `#[repr(u32)]` enum whose variants carry the values of a C
/// enumeration (`Name = value`), with `ALL`, every variant in the order written, and
/// `TryFrom<u32>`. It derives `Clone, Copy, Debug, PartialEq, Eq, Hash`.
macro_rules! c_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $($(#[$variant_meta:meta])* $variant:ident = $value:expr,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u32)]
        $vis enum $name {
            $($(#[$variant_meta])* $variant = $value,)+
        }

        impl $name {
            /// Every variant, in the order of the declaration.
            pub const ALL: [$name; [$(stringify!($variant)),+].len()] = [$($name::$variant),+];
        }

        impl TryFrom<u32> for $name {
            type Error = u32;
            #[inline]
            fn try_from(value: u32) -> ::core::result::Result<Self, u32> {
                $(
                    if value == $name::$variant as u32 {
                        return Ok($name::$variant);
                    }
                )+
                Err(value)
            }
        }
    };
}

pub(crate) use c_enum;

#[cfg(test)]
mod tests {
    c_enum! {
        /// A C enumeration with a gap, as our extensions make.
        enum Sample {
            Zero = 0,
            One = 1,
            Far = 0x10000,
        }
    }

    #[test]
    fn converts_each_value_and_refuses_the_others() {
        for variant in Sample::ALL {
            assert_eq!(Sample::try_from(variant as u32), Ok(variant));
        }
        assert_eq!(Sample::ALL, [Sample::Zero, Sample::One, Sample::Far]);
        assert_eq!(Sample::try_from(2), Err(2));
        assert_eq!(Sample::try_from(0x10001), Err(0x10001));
    }
}
