//! bench: benchmark programs in NESL and VCODE and the harness that runs them and prints
//! one comparison table.
