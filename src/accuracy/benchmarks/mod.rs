//! One reader per benchmark (or family): its repository's rows made into questions in the
//! prompt format AIPerf 0.13 sends.

pub mod aime;
pub mod bigbench;
pub mod gpqa_diamond;
pub mod gsm8k;
pub mod hellaswag;
pub mod lcb_codegeneration;
mod lcb_private_tests;
pub mod math_500;
pub mod mmlu;
pub mod mmlu_pro;
