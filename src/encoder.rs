//! Stage 4, compute: meetcite's own forward pass for BERT cross-encoders stored as weight-only
//! int8 ONNX (the form `models/` ships), beside tract (issue 16, "real int8 compute").
//!
//! Why: tract folds the int8 weights to f32 and runs f32 matmuls (91 MB of weights in memory, a
//! graph to build and optimise at load). A BERT encoder is six ops over and over; written out,
//! its matmuls run on the int8 weights directly: each activation row is quantized to 16 bits
//! (its own scale, as wide as the sum can hold without overflow) and multiplied with the int8
//! weights widened to i16 by `i32x4.dot_i16x8_s` (wasm simd128) or `vpmaddwd` (AVX2), eight or
//! sixteen multiply-adds an instruction where f32 does four. Everything else (attention,
//! softmax, layer norm, GELU) stays in f32. Loading is a copy of the weights, no graph.
//!
//! Which files: [`Bert::from_onnx`] recognises the graph `models/export_hf.py` exports for
//! `BertForSequenceClassification` (initializer names, each linear layer found through the Add of
//! its named bias, per-channel symmetric int8 weights, erf GELU, the attention scale read from
//! the graph). Anything else (other families, f32 files, another head) returns `None` and tract
//! runs it. Each pair is computed alone: its probabilities do not depend on what it is batched
//! with.
//!
//! Accuracy: pinned against onnxruntime's f32 maths of the same file by the same parity tests as
//! tract (tests/nli.rs, tests/families.rs).

use crate::nli::NliError;
use crate::onnx::{ModelProto, NodeProto, TensorProto};
use std::collections::HashMap;

/// Lanes the i16 dot kernels step by (AVX2: 16); rows of the quantized activations are padded to
/// a multiple of it with zeros.
const KPAD: usize = 16;
/// Rows (tokens) per kernel tile.
const RT: usize = 4;
/// Output channels per kernel tile.
const CT: usize = 2;

fn round_up(x: usize, m: usize) -> usize {
    x.div_ceil(m) * m
}

/// A linear layer `y = x W + b` with W int8 per output channel.
struct QLinear {
    k: usize,
    n: usize,
    kp: usize,
    /// `[round_up(n, CT)][kp]`: each output channel's weights contiguous, widened to i16
    w: Vec<i16>,
    /// per output channel
    scale: Vec<f32>,
    bias: Vec<f32>,
    /// the activation's quantization range: `k * max|w| * range` stays below 2^31
    range: f32,
    /// per input channel, `1 / f_j` of [`QLinear::smooth`] (empty: all 1)
    pre: Vec<f32>,
}

impl QLinear {
    /// From the ONNX MatMul weight `[k, n]` (int8, scale per column) and its bias.
    fn new(q: &[i8], k: usize, n: usize, scale: Vec<f32>, bias: Vec<f32>) -> Self {
        let kp = round_up(k, KPAD);
        let np = round_up(n, CT);
        let mut w = vec![0i16; np * kp];
        // [k][n] -> [n][kp] in 16 x 16 tiles: a tile's reads and writes stay in a few cache lines
        // (element by element, the strided writes were a third of the whole model load)
        const B: usize = 16;
        for kb in (0..k).step_by(B) {
            let ke = (kb + B).min(k);
            for cb in (0..n).step_by(B) {
                for c in cb..(cb + B).min(n) {
                    for (kk, d) in (kb..ke).zip(&mut w[c * kp + kb..c * kp + ke]) {
                        *d = q[kk * n + c] as i16;
                    }
                }
            }
        }
        let mut me = QLinear { k, n, kp, w, scale, bias, range: 0.0, pre: Vec::new() };
        me.range = range_for(&me.l1());
        me
    }

    /// Each output channel's L1 norm of its (integer) weights, what [`range_for`] bounds.
    fn l1(&self) -> Vec<i64> {
        // i32 is enough: |w| <= 127 * 64 (smoothed) and k < 2^16
        (0..self.n).map(|c| self.w[c * self.kp..c * self.kp + self.k].iter().map(|&v| (v as i32).abs()).sum::<i32>() as i64).collect()
    }

    /// Scale input channel j down by an integer `f_j` (its weights up by the same: exact in the
    /// integers, the i16 weights have the room), where `mag` says channel j runs `f_j` times
    /// larger than the median channel. A row's quantization step is set by its largest value;
    /// BERT's layer-norm outputs have a few channels many times the others (large gamma or
    /// beta), and without this those few set the step for all (SmoothQuant's observation, with
    /// the factors read off the layer norm instead of calibration data).
    fn smooth(&mut self, mag: &[f32]) {
        let mut sorted: Vec<f32> = mag.to_vec();
        sorted.sort_by(f32::total_cmp);
        let median = sorted[sorted.len() / 2].max(1e-6);
        // at most 64, so a weight stays within 127 * 64 < 2^15: an i16 product, which vectorises
        let f: Vec<i16> = mag.iter().map(|&m| ((m / median).floor() as i32).clamp(1, 64) as i16).collect();
        for c in 0..self.n {
            for (v, &fj) in self.w[c * self.kp..c * self.kp + self.k].iter_mut().zip(&f) {
                *v *= fj;
            }
        }
        self.range = range_for(&self.l1());
        self.pre = f.iter().map(|&f| 1.0 / f as f32).collect();
    }

    /// `x` is `[rows][k]`; returns `[rows][n]`.
    fn forward(&self, x: &[f32], rows: usize, s: &mut Scratch) -> Vec<f32> {
        let rp = round_up(rows, RT);
        let np = round_up(self.n, CT);
        s.q.clear();
        s.q.resize(rp * self.kp, 0);
        s.row_scale.clear();
        s.row_scale.resize(rp, 0.0);
        for r in 0..rows {
            let xr = &x[r * self.k..(r + 1) * self.k];
            let xr = if self.pre.is_empty() {
                xr
            } else {
                s.row.clear();
                s.row.extend(xr.iter().zip(&self.pre).map(|(x, p)| x * p));
                &s.row[..]
            };
            let m = xr.iter().fold(0f32, |m, v| m.max(v.abs()));
            if m == 0.0 || !m.is_finite() {
                // zeros quantize to zeros; a non-finite row gives NaN below, as f32 maths would
                s.row_scale[r] = if m == 0.0 { 0.0 } else { f32::NAN };
                continue;
            }
            let inv = self.range / m;
            s.row_scale[r] = m / self.range;
            for (o, &v) in s.q[r * self.kp..r * self.kp + self.k].iter_mut().zip(xr) {
                *o = round_even(v * inv) as i16;
            }
        }
        s.acc.clear();
        s.acc.resize(rp * np, 0);
        gemm_i16(&s.q, rp, self.kp, &self.w, np, &mut s.acc);
        let mut y = vec![0f32; rows * self.n];
        for r in 0..rows {
            let rs = s.row_scale[r];
            let acc = &s.acc[r * np..r * np + self.n];
            for (((o, &a), &ws), &b) in y[r * self.n..(r + 1) * self.n].iter_mut().zip(acc).zip(&self.scale).zip(&self.bias) {
                *o = a as f32 * (rs * ws) + b;
            }
        }
        y
    }
}

/// The activation range of weights whose columns have these L1 norms: `|sum_k a_k w_kc| <=
/// range * sum_k |w_kc|`, so with the largest column's norm times the range below 2^31 no partial
/// sum of any lane can overflow (exact, unlike `k * max|w|`, which is 3-4x looser on trained
/// weights and cost 1.5 bits at k = 1536). At most i16's 32767.
fn range_for(l1: &[i64]) -> f32 {
    let worst = l1.iter().copied().max().unwrap_or(1).max(1);
    ((i32::MAX as f64) / worst as f64).floor().min(32767.0) as f32
}

/// Round to nearest, ties to even, for |v| < 2^22: branch-free, so loops over it vectorise (and
/// no libm call in wasm).
#[inline(always)]
fn round_even(v: f32) -> f32 {
    const MAGIC: f32 = 12_582_912.0; // 1.5 * 2^23
    (v + MAGIC) - MAGIC
}

/// Buffers reused across a forward pass.
#[derive(Default)]
struct Scratch {
    /// one input row scaled by [`QLinear::smooth`]'s factors
    row: Vec<f32>,
    q: Vec<i16>,
    row_scale: Vec<f32>,
    acc: Vec<i32>,
}

/// `out[r][c] = sum_k a[r][k] * w[c][k]`, `a` `[rows][kp]`, `w` `[n][kp]`, rows a multiple of
/// [`RT`], n of [`CT`], kp of [`KPAD`].
fn gemm_i16(a: &[i16], rows: usize, kp: usize, w: &[i16], n: usize, out: &mut [i32]) {
    debug_assert!(rows.is_multiple_of(RT) && n.is_multiple_of(CT) && kp.is_multiple_of(KPAD));
    debug_assert!(a.len() >= rows * kp && w.len() >= n * kp && out.len() >= rows * n);
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        // SAFETY: the slices hold the sizes asserted above; simd128 is enabled for the build
        unsafe { simd128::gemm(a, rows, kp, w, n, out) };
        return;
    }
    #[cfg(target_arch = "x86_64")]
    {
        if avx512::available() {
            // SAFETY: as above; the features were just detected
            unsafe { avx512::gemm(a, rows, kp, w, n, out) };
            return;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: as above; AVX2 was just detected
            unsafe { avx2::gemm(a, rows, kp, w, n, out) };
            return;
        }
    }
    #[allow(unreachable_code)]
    gemm_i16_scalar(a, rows, kp, w, n, out)
}

/// The portable kernel (and the tests' reference); LLVM turns the inner sum into `pmaddwd` on
/// x86-64.
fn gemm_i16_scalar(a: &[i16], rows: usize, kp: usize, w: &[i16], n: usize, out: &mut [i32]) {
    for c in 0..n {
        let wc = &w[c * kp..(c + 1) * kp];
        for r in 0..rows {
            let ar = &a[r * kp..(r + 1) * kp];
            out[r * n + c] = ar.iter().zip(wc).map(|(&x, &y)| x as i32 * y as i32).sum();
        }
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd128 {
    use super::{CT, RT};
    use core::arch::wasm32::*;

    #[inline(always)]
    unsafe fn hsum(v: v128) -> i32 {
        let s = i32x4_add(v, i32x4_shuffle::<2, 3, 0, 1>(v, v));
        let s = i32x4_add(s, i32x4_shuffle::<1, 0, 3, 2>(s, s));
        i32x4_extract_lane::<0>(s)
    }

    /// Tiles of 4 rows x 2 channels: 6 loads, 8 dots and 8 adds per 8 k, the eight sums in
    /// registers. Column pairs outside, so a pair's weights stay in L1 while every row passes.
    pub(super) unsafe fn gemm(a: &[i16], rows: usize, kp: usize, w: &[i16], n: usize, out: &mut [i32]) {
        let (ap, wp) = (a.as_ptr(), w.as_ptr());
        for c in (0..n).step_by(CT) {
            let w0 = wp.add(c * kp);
            let w1 = wp.add((c + 1) * kp);
            for r in (0..rows).step_by(RT) {
                let a0 = ap.add(r * kp);
                let mut acc = [i32x4_splat(0); 8];
                let mut k = 0;
                while k < kp {
                    let x0 = v128_load(w0.add(k) as *const v128);
                    let x1 = v128_load(w1.add(k) as *const v128);
                    for i in 0..RT {
                        let y = v128_load(a0.add(i * kp + k) as *const v128);
                        acc[2 * i] = i32x4_add(acc[2 * i], i32x4_dot_i16x8(y, x0));
                        acc[2 * i + 1] = i32x4_add(acc[2 * i + 1], i32x4_dot_i16x8(y, x1));
                    }
                    k += 8;
                }
                for i in 0..RT {
                    out[(r + i) * n + c] = hsum(acc[2 * i]);
                    out[(r + i) * n + c + 1] = hsum(acc[2 * i + 1]);
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{CT, RT};
    use core::arch::x86_64::*;

    #[inline(always)]
    unsafe fn hsum(v: __m256i) -> i32 {
        let s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v));
        let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b01_00_11_10>(s));
        let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b10_11_00_01>(s));
        _mm_cvtsi128_si32(s)
    }

    /// The simd128 kernel's tiles at 16 lanes (`vpmaddwd`).
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn gemm(a: &[i16], rows: usize, kp: usize, w: &[i16], n: usize, out: &mut [i32]) {
        let (ap, wp) = (a.as_ptr(), w.as_ptr());
        for c in (0..n).step_by(CT) {
            let w0 = wp.add(c * kp);
            let w1 = wp.add((c + 1) * kp);
            for r in (0..rows).step_by(RT) {
                let a0 = ap.add(r * kp);
                let mut acc = [_mm256_setzero_si256(); 8];
                let mut k = 0;
                while k < kp {
                    let x0 = _mm256_loadu_si256(w0.add(k) as *const __m256i);
                    let x1 = _mm256_loadu_si256(w1.add(k) as *const __m256i);
                    for i in 0..RT {
                        let y = _mm256_loadu_si256(a0.add(i * kp + k) as *const __m256i);
                        acc[2 * i] = _mm256_add_epi32(acc[2 * i], _mm256_madd_epi16(y, x0));
                        acc[2 * i + 1] = _mm256_add_epi32(acc[2 * i + 1], _mm256_madd_epi16(y, x1));
                    }
                    k += 16;
                }
                for i in 0..RT {
                    out[(r + i) * n + c] = hsum(acc[2 * i]);
                    out[(r + i) * n + c + 1] = hsum(acc[2 * i + 1]);
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{CT, RT};
    use core::arch::x86_64::*;

    /// AVX-512 with VNNI (Ice Lake, Sapphire Rapids, Zen 4 and later).
    pub(super) fn available() -> bool {
        std::arch::is_x86_feature_detected!("avx512f") && std::arch::is_x86_feature_detected!("avx512bw") && std::arch::is_x86_feature_detected!("avx512vnni")
    }

    /// The simd128 kernel's tiles at 32 lanes, with VNNI's `vpdpwssd`: the multiply of i16 pairs
    /// and the add into the i32 accumulator in one instruction (AVX2 needs `vpmaddwd` and `vpaddd`
    /// for half the lanes). The same integers as the scalar kernel: no saturation on either path.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    pub(super) unsafe fn gemm(a: &[i16], rows: usize, kp: usize, w: &[i16], n: usize, out: &mut [i32]) {
        let (ap, wp) = (a.as_ptr(), w.as_ptr());
        // kp is a multiple of 16: whole 32-lane steps, then at most one half step (a masked load
        // that zeroes the upper 16 lanes)
        let whole = kp - kp % 32;
        // 4 rows x 4 channels (16 accumulators of the 32 registers): each weight load feeds four
        // rows and each activation load four channels; a last pair of channels as 4 x 2
        let mut c = 0;
        while c < n {
            let wide = if n - c >= 4 { 4 } else { CT };
            let wc = [wp.add(c * kp), wp.add((c + 1) * kp), wp.add((c + 2).min(n - 1) * kp), wp.add((c + 3).min(n - 1) * kp)];
            for r in (0..rows).step_by(RT) {
                let a0 = ap.add(r * kp);
                let mut acc = [_mm512_setzero_si512(); 16];
                let mut k = 0;
                while k < kp {
                    // whole 32-lane steps, then at most one half step (a masked load zeroes the
                    // upper 16 lanes)
                    let m: __mmask32 = if k < whole { !0 } else { 0xffff };
                    let x = [
                        _mm512_maskz_loadu_epi16(m, wc[0].add(k)),
                        _mm512_maskz_loadu_epi16(m, wc[1].add(k)),
                        _mm512_maskz_loadu_epi16(m, wc[2].add(k)),
                        _mm512_maskz_loadu_epi16(m, wc[3].add(k)),
                    ];
                    for i in 0..RT {
                        let y = _mm512_maskz_loadu_epi16(m, a0.add(i * kp + k));
                        for j in 0..4 {
                            acc[4 * i + j] = _mm512_dpwssd_epi32(acc[4 * i + j], y, x[j]);
                        }
                    }
                    k += 32;
                }
                for i in 0..RT {
                    for j in 0..wide {
                        out[(r + i) * n + c + j] = _mm512_reduce_add_epi32(acc[4 * i + j]);
                    }
                }
            }
            c += wide;
        }
    }
}

/// `exp` for the softmax, branch-free so the loop over a row vectorises: Cephes' `expf`
/// polynomial after the reduction by ln 2 (a few ulp over the range a softmax feeds it).
#[inline(always)]
fn exp(x: f32) -> f32 {
    let x = x.clamp(-87.0, 88.0);
    let n = round_even(x * std::f32::consts::LOG2_E);
    let r = x - n * 0.693_359_4 - n * -2.121_944_4e-4;
    let mut p = 1.987_569_1e-4f32;
    p = p * r + 1.398_199_9e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 1.666_666_5e-1;
    p = p * r + 0.5; // Cephes' 5.0000001201e-1, which is 0.5 in f32
    let y = p * r * r + r + 1.0;
    y * f32::from_bits(((n as i32 + 127) << 23) as u32)
}

/// `erf` for the GELU: Eigen's rational approximation (`generic_fast_erf_float`), branch-free,
/// within a few ulp of erf in f32.
#[inline(always)]
fn erf(x: f32) -> f32 {
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = -2.726_142_3e-10f32;
    p = x2 * p + 2.770_681_4e-8;
    p = x2 * p + -2.101_024e-6;
    p = x2 * p + -5.692_506_4e-5;
    p = x2 * p + -7.349_906_3e-4;
    p = x2 * p + -2.954_600_1e-3;
    p = x2 * p + -1.609_603_3e-2;
    p *= x;
    let mut q = -1.456_607_2e-5f32;
    q = x2 * q + -2.133_740_6e-4;
    q = x2 * q + -1.682_827e-3;
    q = x2 * q + -7.373_329e-3;
    q = x2 * q + -1.426_474e-2;
    p / q
}

struct LayerNorm {
    g: Vec<f32>,
    b: Vec<f32>,
    eps: f32,
}

impl LayerNorm {
    /// How large each output channel runs: `|gamma| + |beta|`.
    fn mag(&self) -> Vec<f32> {
        self.g.iter().zip(&self.b).map(|(g, b)| g.abs() + b.abs()).collect()
    }

    fn apply(&self, x: &mut [f32]) {
        let h = self.g.len();
        for row in x.chunks_exact_mut(h) {
            let mean = sum(row) / h as f32;
            row.iter_mut().for_each(|v| *v -= mean);
            let var = dot(row, row) / h as f32;
            let inv = 1.0 / (var + self.eps).sqrt();
            for ((v, g), b) in row.iter_mut().zip(&self.g).zip(&self.b) {
                *v = *v * inv * g + b;
            }
        }
    }
}

/// Sums in eight running lanes, so the reduction vectorises (one long chain would not: f32
/// addition is not reassociated for us).
fn sum(x: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let mut it = x.chunks_exact(8);
    for c in &mut it {
        for i in 0..8 {
            acc[i] += c[i];
        }
    }
    acc.iter().sum::<f32>() + it.remainder().iter().sum::<f32>()
}

/// The largest value, in eight lanes (NaN-free input: scores of finite activations).
fn max(x: &[f32]) -> f32 {
    let mut acc = [f32::NEG_INFINITY; 8];
    let mut it = x.chunks_exact(8);
    for c in &mut it {
        for i in 0..8 {
            acc[i] = if c[i] > acc[i] { c[i] } else { acc[i] };
        }
    }
    it.remainder().iter().chain(&acc).fold(f32::NEG_INFINITY, |m, &v| if v > m { v } else { m })
}

/// `sum(a * b)` in eight lanes, as [`sum`].
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (mut ia, mut ib) = (a.chunks_exact(8), b.chunks_exact(8));
    for (x, y) in (&mut ia).zip(&mut ib) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    acc.iter().sum::<f32>() + ia.remainder().iter().zip(ib.remainder()).map(|(x, y)| x * y).sum::<f32>()
}

struct Layer {
    /// query, key and value in one (`n` = 3 hidden)
    qkv: QLinear,
    out: QLinear,
    ln1: LayerNorm,
    up: QLinear,
    down: QLinear,
    ln2: LayerNorm,
}

/// An embedding table: int8 rows with a scale each, or f32.
enum Table {
    Q { q: Vec<i8>, scale: Vec<f32>, dim: usize },
    F(Vec<f32>, usize),
}

impl Table {
    fn rows(&self) -> usize {
        match self {
            Table::Q { scale, .. } => scale.len(),
            Table::F(v, d) => v.len() / d,
        }
    }
    fn add_row(&self, i: usize, out: &mut [f32]) {
        match self {
            Table::Q { q, scale, dim } => {
                for (o, &v) in out.iter_mut().zip(&q[i * dim..(i + 1) * dim]) {
                    *o += v as f32 * scale[i];
                }
            }
            Table::F(v, d) => {
                for (o, &x) in out.iter_mut().zip(&v[i * d..(i + 1) * d]) {
                    *o += x;
                }
            }
        }
    }
}

/// A BERT sequence classifier: embeddings, encoder layers, pooler, classifier.
pub(crate) struct Bert {
    hidden: usize,
    heads: usize,
    /// what the graph multiplies the attention scores by (1/sqrt(head size))
    att_scale: f32,
    word: Table,
    pos: Table,
    types: Table,
    ln: LayerNorm,
    layers: Vec<Layer>,
    pooler_w: Vec<f32>,
    pooler_b: Vec<f32>,
    cls_w: Vec<f32>,
    cls_b: Vec<f32>,
}

impl std::fmt::Debug for Bert {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bert").field("hidden", &self.hidden).field("heads", &self.heads).field("layers", &self.layers.len()).finish()
    }
}

/// An initializer or a `DequantizeLinear` output, as the graph names it.
enum Weight<'a> {
    F32(&'a TensorProto<'a>),
    Int8 { q: &'a TensorProto<'a>, scale: Vec<f32>, axis: usize },
}

/// A linear layer as found in the graph: int8 weights `[k, n]`, k, n, scales, bias.
type LinearParts = (Vec<i8>, usize, usize, Vec<f32>, Vec<f32>);

struct Graph<'a> {
    inits: HashMap<&'a str, &'a TensorProto<'a>>,
    deq: HashMap<&'a str, Weight<'a>>,
    /// node by output name
    by_out: HashMap<&'a str, &'a NodeProto<'a>>,
    nodes: &'a [NodeProto<'a>],
    /// constants of `Constant` nodes, by output
    consts: HashMap<&'a str, &'a TensorProto<'a>>,
}

fn f32s(t: &TensorProto<'_>) -> Option<Vec<f32>> {
    const FLOAT: i32 = 1;
    if t.data_type != FLOAT {
        return None;
    }
    if !t.raw_data.is_empty() {
        if !t.raw_data.len().is_multiple_of(4) {
            return None;
        }
        Some(t.raw_data.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
    } else {
        Some(t.float_data.clone())
    }
}

fn dims(t: &TensorProto<'_>) -> Vec<usize> {
    t.dims.iter().map(|&d| d.max(0) as usize).collect()
}

impl<'a> Graph<'a> {
    fn new(proto: &'a ModelProto<'a>) -> Option<Self> {
        let g = proto.graph.as_ref()?;
        let inits: HashMap<&str, &TensorProto> = g.initializer.iter().map(|t| (t.name.as_str(), t)).collect();
        let mut deq = HashMap::new();
        for n in &g.node {
            if let Some(d) = crate::nli::Dequant::of(n, &inits) {
                // symmetric int8 only: the kernels multiply the stored levels as they are
                if !d.signed || d.zps.iter().any(|&z| z != 0) {
                    return None;
                }
                let q = inits.get(n.input[0].as_str())?;
                let axis = match d.channels {
                    1 => usize::MAX,
                    _ => n.attribute.iter().find(|a| a.name == "axis").map(|a| a.i).unwrap_or(1) as usize,
                };
                deq.insert(n.output[0].as_str(), Weight::Int8 { q, scale: d.scales.clone(), axis });
            }
        }
        for (name, t) in &inits {
            deq.entry(*name).or_insert(Weight::F32(t));
        }
        let by_out = g.node.iter().flat_map(|n| n.output.iter().map(move |o| (o.as_str(), n))).collect();
        let consts = g
            .node
            .iter()
            .filter(|n| n.op_type == "Constant" && n.output.len() == 1)
            .filter_map(|n| n.attribute.iter().find(|a| a.name == "value").and_then(|a| a.t.as_ref()).map(|t| (n.output[0].as_str(), t)))
            .collect();
        Some(Graph { inits, deq, by_out, nodes: &g.node, consts })
    }

    fn f32(&self, name: &str, shape: &[usize]) -> Option<Vec<f32>> {
        match self.deq.get(name)? {
            Weight::F32(t) if dims(t) == shape => f32s(t).filter(|v| v.len() == shape.iter().product::<usize>()),
            _ => None,
        }
    }

    fn table(&self, name: &str, dim: usize) -> Option<Table> {
        match self.deq.get(name)? {
            Weight::F32(t) => {
                let d = dims(t);
                (d.len() == 2 && d[1] == dim).then(|| f32s(t).map(|v| Table::F(v, dim))).flatten()
            }
            Weight::Int8 { q, scale, axis } => {
                let d = dims(q);
                let ok = d.len() == 2 && d[1] == dim && *axis == 0 && scale.len() == d[0];
                ok.then(|| Table::Q { q: q.raw_data.iter().map(|&b| b as i8).collect(), scale: scale.clone(), dim })
            }
        }
    }

    /// The linear layer whose bias is `bias`: the Add reading the bias and a MatMul output, the
    /// MatMul's weight an int8 `[k, n]` with a scale per column.
    fn linear(&self, bias: &str, k: usize) -> Option<LinearParts> {
        let b = f32s(self.inits.get(bias)?)?;
        let n = b.len();
        let add = self.nodes.iter().find(|x| x.op_type == "Add" && x.input.len() == 2 && x.input.iter().any(|i| i == bias))?;
        let other = add.input.iter().find(|i| *i != bias)?;
        let mm = self.by_out.get(other.as_str()).filter(|m| m.op_type == "MatMul" && m.input.len() == 2)?;
        match self.deq.get(mm.input[1].as_str())? {
            Weight::Int8 { q, scale, axis } if dims(q) == [k, n] && *axis == 1 && scale.len() == n => {
                Some((q.raw_data.iter().map(|&b| b as i8).collect(), k, n, scale.clone(), b))
            }
            _ => None,
        }
    }

    fn layer_norm(&self, prefix: &str, h: usize, eps: f32) -> Option<LayerNorm> {
        Some(LayerNorm { g: self.f32(&format!("{prefix}.weight"), &[h])?, b: self.f32(&format!("{prefix}.bias"), &[h])?, eps })
    }

    /// The scalar a Constant node (or initializer) holds.
    fn scalar(&self, name: &str) -> Option<f32> {
        let t = self.consts.get(name).or_else(|| self.inits.get(name))?;
        let v = f32s(t)?;
        (v.len() == 1).then(|| v[0])
    }

    /// What each Softmax's scores were multiplied by: `Softmax(Add(Mul(MatMul, c), mask))` (or
    /// `Div` by c). One value for every layer, else `None`.
    fn attention_scale(&self) -> Option<(f32, usize)> {
        let mut found = None;
        let mut count = 0;
        for s in self.nodes.iter().filter(|n| n.op_type == "Softmax") {
            let add = self.by_out.get(s.input.first()?.as_str()).filter(|n| n.op_type == "Add")?;
            let scaled = add.input.iter().filter_map(|i| self.by_out.get(i.as_str())).find(|n| n.op_type == "Mul" || n.op_type == "Div")?;
            let c = scaled.input.iter().find_map(|i| self.scalar(i))?;
            let v = if scaled.op_type == "Div" { 1.0 / c } else { c };
            match found {
                None => found = Some(v),
                Some(f) if f == v => {}
                _ => return None,
            }
            count += 1;
        }
        found.map(|f| (f, count))
    }

    fn count(&self, op: &str) -> usize {
        self.nodes.iter().filter(|n| n.op_type == op).count()
    }
}

impl Bert {
    /// The encoder of a weight-only int8 `BertForSequenceClassification` export, `None` for any
    /// other graph (tract runs those).
    pub(crate) fn from_onnx(proto: &ModelProto<'_>, labels: usize) -> Option<Bert> {
        let g = Graph::new(proto)?;
        let word_name = g.deq.keys().find(|k| k.ends_with("bert.embeddings.word_embeddings.weight"))?.to_string();
        let root = word_name.strip_suffix("embeddings.word_embeddings.weight")?; // "m.bert."
        let head = root.strip_suffix("bert.")?; // "m."
        let h = match g.deq.get(word_name.as_str())? {
            Weight::Int8 { q, .. } => *dims(q).get(1)?,
            Weight::F32(t) => *dims(t).get(1)?,
        };
        let eps = g.nodes.iter().find(|n| n.op_type == "LayerNormalization")?.attribute.iter().find(|a| a.name == "epsilon").map(|a| a.f).unwrap_or(1e-5);
        let mut layers = Vec::new();
        while let Some(l) = {
            let p = format!("{root}encoder.layer.{}.", layers.len());
            g.linear(&format!("{p}attention.self.query.bias"), h).map(|q| (p, q))
        } {
            let (p, q) = l;
            let k = g.linear(&format!("{p}attention.self.key.bias"), h)?;
            let v = g.linear(&format!("{p}attention.self.value.bias"), h)?;
            let (mut w, mut scale, mut bias) = (Vec::with_capacity(3 * h * h), Vec::new(), Vec::new());
            // the three as one [h, 3h] weight: one pass over the rows instead of three
            for r in 0..h {
                for t in [&q, &k, &v] {
                    if t.2 != h {
                        return None;
                    }
                    w.extend_from_slice(&t.0[r * h..(r + 1) * h]);
                }
            }
            for t in [&q, &k, &v] {
                scale.extend_from_slice(&t.3);
                bias.extend_from_slice(&t.4);
            }
            let qkv = QLinear::new(&w, h, 3 * h, scale, bias);
            let o = g.linear(&format!("{p}attention.output.dense.bias"), h)?;
            let up = g.linear(&format!("{p}intermediate.dense.bias"), h)?;
            let down = g.linear(&format!("{p}output.dense.bias"), up.2)?;
            if o.2 != h || down.2 != h {
                return None;
            }
            layers.push(Layer {
                qkv,
                out: QLinear::new(&o.0, o.1, o.2, o.3, o.4),
                ln1: g.layer_norm(&format!("{p}attention.output.LayerNorm"), h, eps)?,
                up: QLinear::new(&up.0, up.1, up.2, up.3, up.4),
                down: QLinear::new(&down.0, down.1, down.2, down.3, down.4),
                ln2: g.layer_norm(&format!("{p}output.LayerNorm"), h, eps)?,
            });
        }
        let ln = g.layer_norm(&format!("{root}embeddings.LayerNorm"), h, eps)?;
        // each layer's qkv reads the layer norm before it, its up projection its ln1 (on the 20
        // parity pairs: max |dp| vs onnxruntime 2.9e-4 without, 7.8e-5 with)
        let mut before = ln.mag();
        for l in layers.iter_mut() {
            l.qkv.smooth(&before);
            l.up.smooth(&l.ln1.mag());
            before = l.ln2.mag();
        }
        // the graph must be the plain BERT of those weights: an erf GELU per layer, one softmax per
        // layer with one scale, layer norms, the pooler's tanh, two Gemms (pooler, classifier)
        let n = layers.len();
        let (att_scale, softmaxes) = g.attention_scale()?;
        let head_dim = (1.0 / (att_scale * att_scale)).round() as usize;
        let plain = n > 0
            && softmaxes == n
            && g.count("Erf") == n
            && g.count("LayerNormalization") == 2 * n + 1
            && g.count("MatMul") == 8 * n
            && g.count("Gemm") == 2
            && g.count("Tanh") == 1
            && head_dim > 0
            && h % head_dim == 0
            && head_dim.is_multiple_of(16)
            && ((head_dim as f32).sqrt() * att_scale - 1.0).abs() < 1e-3;
        if !plain {
            return None;
        }
        let gemm_ok = |w: &str| {
            g.nodes.iter().any(|x| {
                x.op_type == "Gemm"
                    && x.input.get(1).map(String::as_str) == Some(w)
                    && x.attribute.iter().find(|a| a.name == "transB").map(|a| a.i) == Some(1)
                    && x.attribute.iter().all(|a| a.name != "transA" || a.i == 0)
                    && x.attribute.iter().all(|a| !(a.name == "alpha" || a.name == "beta") || a.f == 1.0)
            })
        };
        let (pw, cw) = (format!("{root}pooler.dense.weight"), format!("{head}classifier.weight"));
        if !gemm_ok(&pw) || !gemm_ok(&cw) {
            return None;
        }
        let word = g.table(&word_name, h)?;
        let pos = g.table(&format!("{root}embeddings.position_embeddings.weight"), h)?;
        let types = g.table(&format!("{root}embeddings.token_type_embeddings.weight"), h)?;
        Some(Bert {
            hidden: h,
            heads: h / head_dim,
            att_scale,
            word,
            pos,
            types,
            ln,
            layers,
            pooler_w: g.f32(&pw, &[h, h])?,
            pooler_b: g.f32(&format!("{root}pooler.dense.bias"), &[h])?,
            cls_w: g.f32(&cw, &[labels, h])?,
            cls_b: g.f32(&format!("{head}classifier.bias"), &[labels])?,
        })
    }

    /// The logits of one sequence (`ids`, `types` of the same length, no padding).
    pub(crate) fn logits(&self, ids: &[u32], types: &[u32]) -> Result<Vec<f32>, NliError> {
        let (l, h) = (ids.len(), self.hidden);
        if l == 0 || l > self.pos.rows() || types.len() != l {
            return Err(NliError::Inference(format!("{l} tokens: the model takes 1 to {}", self.pos.rows())));
        }
        let mut x = vec![0f32; l * h];
        for (t, row) in x.chunks_exact_mut(h).enumerate() {
            let (id, ty) = (ids[t] as usize, types[t] as usize);
            if id >= self.word.rows() || ty >= self.types.rows() {
                return Err(NliError::Inference(format!("token id {id} / type {ty} outside the model's tables")));
            }
            self.word.add_row(id, row);
            self.types.add_row(ty, row);
            self.pos.add_row(t, row);
        }
        self.ln.apply(&mut x);
        let mut s = Scratch::default();
        for layer in &self.layers {
            let qkv = layer.qkv.forward(&x, l, &mut s);
            let ctx = self.attention(&qkv, l);
            let mut a = layer.out.forward(&ctx, l, &mut s);
            a.iter_mut().zip(&x).for_each(|(a, x)| *a += x);
            layer.ln1.apply(&mut a);
            let mut f = layer.up.forward(&a, l, &mut s);
            f.iter_mut().for_each(|v| *v = gelu(*v));
            let mut o = layer.down.forward(&f, l, &mut s);
            o.iter_mut().zip(&a).for_each(|(o, a)| *o += a);
            layer.ln2.apply(&mut o);
            x = o;
        }
        // pooler on the first token, then the classifier (Gemm with W transposed)
        let first = &x[..h];
        let pooled: Vec<f32> = (0..h).map(|o| (dot(&self.pooler_w[o * h..(o + 1) * h], first) + self.pooler_b[o]).tanh()).collect();
        Ok((0..self.cls_b.len()).map(|o| dot(&self.cls_w[o * h..(o + 1) * h], &pooled) + self.cls_b[o]).collect())
    }

    /// Multi-head self-attention over `qkv` (`[l][3h]`: queries, keys, values), no mask (one
    /// unpadded sequence). The loops keep their sums in registers: scores 8 keys at a time
    /// against the keys transposed (`acc[t] += q[d] * kT[d][j + t]`), the context 16 channels at
    /// a time (`acc[t] += p[j] * v[j][c + t]`); both vectorise without reassociating a sum.
    fn attention(&self, qkv: &[f32], l: usize) -> Vec<f32> {
        let (h, hd) = (self.hidden, self.hidden / self.heads);
        let lp = round_up(l, 8);
        let mut ctx = vec![0f32; l * h];
        let mut kt = vec![0f32; hd * lp];
        let mut row = vec![0f32; lp];
        for head in 0..self.heads {
            let (qo, ko, vo) = (head * hd, h + head * hd, 2 * h + head * hd);
            for j in 0..l {
                for d in 0..hd {
                    kt[d * lp + j] = qkv[j * 3 * h + ko + d];
                }
            }
            for i in 0..l {
                let q = &qkv[i * 3 * h + qo..i * 3 * h + qo + hd];
                for (jb, out) in row.chunks_exact_mut(8).enumerate() {
                    let mut acc = [0f32; 8];
                    for (d, &qd) in q.iter().enumerate() {
                        let k = &kt[d * lp + jb * 8..d * lp + jb * 8 + 8];
                        for t in 0..8 {
                            acc[t] += qd * k[t];
                        }
                    }
                    out.copy_from_slice(&acc);
                }
                let row = &mut row[..l];
                row.iter_mut().for_each(|r| *r *= self.att_scale);
                let m = max(row);
                row.iter_mut().for_each(|r| *r = exp(*r - m));
                let inv = 1.0 / sum(row);
                let c = &mut ctx[i * h + qo..i * h + qo + hd];
                for (cb, c) in c.chunks_exact_mut(16).enumerate() {
                    let mut acc = [0f32; 16];
                    for (j, &p) in row.iter().enumerate() {
                        let at = j * 3 * h + vo + cb * 16;
                        let v = &qkv[at..at + 16];
                        for t in 0..16 {
                            acc[t] += p * v[t];
                        }
                    }
                    for t in 0..16 {
                        c[t] = acc[t] * inv;
                    }
                }
            }
        }
        ctx
    }
}

#[inline(always)]
fn gelu(x: f32) -> f32 {
    x * (1.0 + erf(x / std::f32::consts::SQRT_2)) * 0.5
}

#[cfg(test)]
mod tests {
    use super::*;

    /// erf in f64 by its Taylor series (exact enough for |x| <= 4 to check an f32 approximation).
    fn erf64(x: f64) -> f64 {
        let (mut term, mut s) = (x, x);
        for n in 1..200 {
            term *= -x * x / n as f64;
            s += term / (2 * n + 1) as f64;
        }
        s * 2.0 / std::f64::consts::PI.sqrt()
    }

    #[test]
    fn exp_and_erf_are_within_a_few_ulp() {
        let mut worst_exp = 0f64;
        let mut worst_erf = 0f64;
        for i in -8000..=8000 {
            let x = i as f32 / 100.0; // -80..80
            if x <= 0.0 {
                let want = (x as f64).exp();
                worst_exp = worst_exp.max(((exp(x) as f64) - want).abs() / want);
            }
            let x = i as f32 / 1000.0; // -8..8
            let want = if x.abs() < 4.0 { erf64(x as f64) } else { (x as f64).signum() };
            worst_erf = worst_erf.max(((erf(x) as f64) - want).abs());
        }
        assert!(worst_exp < 4e-7, "exp relative error {worst_exp:e}");
        assert!(worst_erf < 1e-6, "erf absolute error {worst_erf:e}");
    }

    #[test]
    fn kernel_equals_the_scalar_reference() {
        // a small LCG: the crate has no rand dependency
        let mut s = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (s >> 33) as i64
        };
        for (rows, n, kp) in [(4, 2, 16), (8, 6, 48), (12, 10, 384), (4, 4, 1536)] {
            let a: Vec<i16> = (0..rows * kp).map(|_| (next() % 65535 - 32767) as i16).collect();
            let w: Vec<i16> = (0..n * kp).map(|_| (next() % 255 - 127) as i16).collect();
            // the sums stay in i32 as QLinear's range guarantees: scale a down for long rows
            let a: Vec<i16> = a.iter().map(|&v| (v as i32 * 384 / kp.max(384) as i32) as i16).collect();
            let (mut got, mut want) = (vec![0; rows * n], vec![0; rows * n]);
            gemm_i16(&a, rows, kp, &w, n, &mut got);
            gemm_i16_scalar(&a, rows, kp, &w, n, &mut want);
            assert_eq!(got, want, "{rows}x{n}x{kp}");
            // every x86 kernel this machine has, not only the one the dispatch picks
            #[cfg(target_arch = "x86_64")]
            {
                if std::arch::is_x86_feature_detected!("avx2") {
                    got.fill(0);
                    // SAFETY: sizes as gemm_i16 asserts; AVX2 detected
                    unsafe { avx2::gemm(&a, rows, kp, &w, n, &mut got) };
                    assert_eq!(got, want, "avx2 {rows}x{n}x{kp}");
                }
                if avx512::available() {
                    got.fill(0);
                    // SAFETY: as above; AVX-512 VNNI detected
                    unsafe { avx512::gemm(&a, rows, kp, &w, n, &mut got) };
                    assert_eq!(got, want, "avx512 {rows}x{n}x{kp}");
                }
            }
        }
    }

    #[test]
    fn quantized_linear_is_close_to_f32() {
        let (k, n, rows) = (96, 6, 5);
        let q: Vec<i8> = (0..k * n).map(|i| ((i * 37 % 255) as i32 - 127) as i8).collect();
        let scale: Vec<f32> = (0..n).map(|c| 0.01 + c as f32 * 0.001).collect();
        let bias: Vec<f32> = (0..n).map(|c| c as f32 * 0.5 - 1.0).collect();
        let lin = QLinear::new(&q, k, n, scale.clone(), bias.clone());
        let x: Vec<f32> = (0..rows * k).map(|i| ((i * 7919 % 1000) as f32 / 100.0 - 5.0) * if i % 97 == 0 { 30.0 } else { 1.0 }).collect();
        let y = lin.forward(&x, rows, &mut Scratch::default());
        for r in 0..rows {
            for c in 0..n {
                let want: f64 = (0..k).map(|kk| x[r * k + kk] as f64 * q[kk * n + c] as f64 * scale[c] as f64).sum::<f64>() + bias[c] as f64;
                let mag: f64 = (0..k).map(|kk| (x[r * k + kk] as f64 * q[kk * n + c] as f64 * scale[c] as f64).abs()).sum();
                assert!((y[r * n + c] as f64 - want).abs() <= 1e-4 * mag + 1e-6, "{r},{c}: {} vs {want}", y[r * n + c]);
            }
        }
        // a zero row gives the bias
        let y = lin.forward(&vec![0.0; k], 1, &mut Scratch::default());
        assert_eq!(y, bias);
    }
}
