//! VCODE: the vector stack-machine language of the CMU NESL system.
//!
//! This crate holds the VCODE IR (the instruction set defined once, in one table), the
//! parser and printer for the CMU text format, the verifier, the interpreter (a stack
//! machine generic over the [`Cvl`] trait) and the CPU implementation of that trait.
//! It does not know NESL: the front end (`nesl-front`) produces VCODE text that this
//! crate parses and runs.
