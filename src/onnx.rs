//! Stage 4, load time: the part of an ONNX file meetcite reads itself (issue 16, ".wasm <= 2 MB").
//!
//! Why its own reader: meetcite's int8 encoder ([`crate::encoder`]) needs the graph's nodes and
//! initializers, nothing of tract. Reading them through tract's protobuf types kept tract-onnx in
//! every build; with this reader, a build without the `tract` feature (the npm package's default
//! wasm) runs the shipped model without tract's ~1.5 MB. It is also zero-copy: a tensor's
//! `raw_data` borrows the file's bytes, so the 23 MB of int8 weights are not copied before the
//! encoder widens them.
//!
//! Only what meetcite reads is decoded (protobuf skips unknown fields by design): the graph's
//! nodes, initializers, inputs and outputs; a node's attributes of type float, int, ints and
//! tensor. Subgraphs (`If`, `Loop`) and sparse or external tensors are skipped or left empty, so
//! the decoder never recurses deeper than attribute -> tensor, whatever the input. Field numbers
//! are those of `onnx.proto3` (onnx 1.x).

use std::fmt;

/// Why the bytes are not an ONNX file this reader can decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// byte offset in the file where decoding stopped
    pub at: usize,
    pub what: &'static str,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.what, self.at)
    }
}

impl std::error::Error for DecodeError {}

/// `ModelProto`: the graph only.
#[derive(Debug, Default, Clone)]
pub struct ModelProto<'a> {
    pub graph: Option<GraphProto<'a>>,
}

/// `GraphProto`.
#[derive(Debug, Default, Clone)]
pub struct GraphProto<'a> {
    pub node: Vec<NodeProto<'a>>,
    pub initializer: Vec<TensorProto<'a>>,
    pub input: Vec<ValueInfoProto>,
    pub output: Vec<ValueInfoProto>,
}

/// `NodeProto`.
#[derive(Debug, Default, Clone)]
pub struct NodeProto<'a> {
    pub input: Vec<String>,
    pub output: Vec<String>,
    pub name: String,
    pub op_type: String,
    pub domain: String,
    pub attribute: Vec<AttributeProto<'a>>,
}

/// `AttributeProto`: the scalar, ints and tensor forms.
#[derive(Debug, Default, Clone)]
pub struct AttributeProto<'a> {
    pub name: String,
    pub f: f32,
    pub i: i64,
    pub ints: Vec<i64>,
    pub t: Option<TensorProto<'a>>,
}

/// `TensorProto`: dense data, `raw_data` borrowed from the file.
#[derive(Debug, Default, Clone)]
pub struct TensorProto<'a> {
    pub name: String,
    pub dims: Vec<i64>,
    pub data_type: i32,
    pub raw_data: &'a [u8],
    pub float_data: Vec<f32>,
    pub int32_data: Vec<i32>,
    pub int64_data: Vec<i64>,
}

/// `ValueInfoProto`: the name only.
#[derive(Debug, Default, Clone)]
pub struct ValueInfoProto {
    pub name: String,
}

/// Decode an ONNX `ModelProto`.
pub fn read(bytes: &[u8]) -> Result<ModelProto<'_>, DecodeError> {
    let mut m = ModelProto::default();
    let mut r = Reader::of(bytes, 0);
    let mut any = false;
    while let Some((field, v)) = r.next()? {
        any = true;
        if let (7, Value::Bytes(s, at)) = (field, v) {
            m.graph = Some(graph(s, at)?);
        }
    }
    if !any {
        return Err(DecodeError { at: 0, what: "no protobuf fields" });
    }
    Ok(m)
}

/// One field's value, as the wire type gives it; `Bytes` with its slice's offset in the file.
#[derive(Clone, Copy)]
pub(crate) enum Value<'a> {
    Varint(u64),
    Fixed32(u32),
    /// (no field meetcite reads is 64-bit fixed: skipped)
    Fixed64,
    Bytes(&'a [u8], usize),
}

/// A cursor over one message `b`, which starts at byte `base` of the file (errors and nested
/// messages carry file offsets). Also what [`crate::graph`] walks a file's top-level fields with.
pub(crate) struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
    base: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn of(b: &'a [u8], base: usize) -> Reader<'a> {
        Reader { b, pos: 0, base }
    }

    /// The file offset of the next field.
    #[cfg(feature = "tract")]
    pub(crate) fn pos(&self) -> usize {
        self.base + self.pos
    }

    fn err(&self, what: &'static str) -> DecodeError {
        DecodeError { at: self.base + self.pos, what }
    }

    fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let &byte = self.b.get(self.pos).ok_or_else(|| self.err("truncated varint"))?;
            self.pos += 1;
            v |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(self.err("varint longer than 10 bytes"))
    }

    fn take(&mut self, n: usize) -> Result<(&'a [u8], usize), DecodeError> {
        let at = self.pos;
        let stop = at.checked_add(n).filter(|&s| s <= self.b.len()).ok_or_else(|| self.err("field runs past the end of its message"))?;
        self.pos = stop;
        Ok((&self.b[at..stop], self.base + at))
    }

    /// The next (field number, value), or `None` at the end of the message.
    pub(crate) fn next(&mut self) -> Result<Option<(u32, Value<'a>)>, DecodeError> {
        if self.pos >= self.b.len() {
            return Ok(None);
        }
        let key = self.varint()?;
        let field = u32::try_from(key >> 3).ok().filter(|&f| f != 0).ok_or_else(|| self.err("bad field number"))?;
        let v = match key & 7 {
            0 => Value::Varint(self.varint()?),
            1 => {
                self.take(8)?;
                Value::Fixed64
            }
            2 => {
                let n = usize::try_from(self.varint()?).map_err(|_| self.err("length too large"))?;
                let (s, at) = self.take(n)?;
                Value::Bytes(s, at)
            }
            5 => Value::Fixed32(u32::from_le_bytes(self.take(4)?.0.try_into().expect("4 bytes"))),
            _ => return Err(self.err("unsupported wire type (groups are not ONNX)")),
        };
        Ok(Some((field, v)))
    }
}

/// A varint, as protobuf writes it (the writing side: `meetcite graph`'s metadata entry, and the
/// tests' hand-made models).
#[cfg(any(test, feature = "tract"))]
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A length-delimited protobuf field.
#[cfg(any(test, feature = "tract"))]
pub(crate) fn put_field(out: &mut Vec<u8>, field: u64, bytes: &[u8]) {
    put_varint(out, (field << 3) | 2);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn string(v: Value<'_>) -> Result<String, DecodeError> {
    match v {
        Value::Bytes(s, at) => std::str::from_utf8(s).map(str::to_owned).map_err(|_| DecodeError { at, what: "string field is not UTF-8" }),
        _ => Err(DecodeError { at: 0, what: "string field with a numeric wire type" }),
    }
}

/// A repeated varint field, packed (one length-delimited run) or not (one value per field).
fn varints(v: Value<'_>, out: &mut Vec<i64>) -> Result<(), DecodeError> {
    match v {
        Value::Varint(x) => out.push(x as i64),
        Value::Bytes(s, at) => {
            let mut r = Reader::of(s, at);
            while r.pos < r.b.len() {
                out.push(r.varint()? as i64);
            }
        }
        _ => return Err(DecodeError { at: 0, what: "integer field with a fixed-width wire type" }),
    }
    Ok(())
}

/// A repeated float field, packed or not.
fn floats(v: Value<'_>, out: &mut Vec<f32>) -> Result<(), DecodeError> {
    match v {
        Value::Fixed32(x) => out.push(f32::from_bits(x)),
        Value::Bytes(s, _) if s.len() % 4 == 0 => out.extend(s.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
        Value::Bytes(_, at) => return Err(DecodeError { at, what: "packed floats not a multiple of 4 bytes" }),
        _ => return Err(DecodeError { at: 0, what: "float field with a varint wire type" }),
    }
    Ok(())
}

fn int(v: Value<'_>) -> Result<i64, DecodeError> {
    match v {
        Value::Varint(x) => Ok(x as i64),
        _ => Err(DecodeError { at: 0, what: "integer field with another wire type" }),
    }
}

fn graph<'a>(s: &'a [u8], at: usize) -> Result<GraphProto<'a>, DecodeError> {
    let mut g = GraphProto::default();
    let mut r = Reader::of(s, at);
    while let Some((field, v)) = r.next()? {
        match (field, v) {
            (1, Value::Bytes(s, at)) => g.node.push(node(s, at)?),
            (5, Value::Bytes(s, at)) => g.initializer.push(tensor(s, at)?),
            (11, Value::Bytes(s, at)) => g.input.push(value_info(s, at)?),
            (12, Value::Bytes(s, at)) => g.output.push(value_info(s, at)?),
            _ => {}
        }
    }
    Ok(g)
}

fn value_info(s: &[u8], at: usize) -> Result<ValueInfoProto, DecodeError> {
    let mut vi = ValueInfoProto::default();
    let mut r = Reader::of(s, at);
    while let Some((field, v)) = r.next()? {
        if field == 1 {
            vi.name = string(v)?;
        }
    }
    Ok(vi)
}

fn node<'a>(s: &'a [u8], at: usize) -> Result<NodeProto<'a>, DecodeError> {
    let mut n = NodeProto::default();
    let mut r = Reader::of(s, at);
    while let Some((field, v)) = r.next()? {
        match field {
            1 => n.input.push(string(v)?),
            2 => n.output.push(string(v)?),
            3 => n.name = string(v)?,
            4 => n.op_type = string(v)?,
            7 => n.domain = string(v)?,
            5 => {
                if let Value::Bytes(s, at) = v {
                    n.attribute.push(attribute(s, at)?);
                }
            }
            _ => {}
        }
    }
    Ok(n)
}

fn attribute<'a>(s: &'a [u8], at: usize) -> Result<AttributeProto<'a>, DecodeError> {
    let mut a = AttributeProto::default();
    let mut r = Reader::of(s, at);
    while let Some((field, v)) = r.next()? {
        match (field, v) {
            (1, v) => a.name = string(v)?,
            (2, Value::Fixed32(x)) => a.f = f32::from_bits(x),
            (3, v) => a.i = int(v)?,
            (5, Value::Bytes(s, at)) => a.t = Some(tensor(s, at)?),
            (8, v) => varints(v, &mut a.ints)?,
            _ => {}
        }
    }
    Ok(a)
}

fn tensor<'a>(s: &'a [u8], at: usize) -> Result<TensorProto<'a>, DecodeError> {
    let mut t = TensorProto::default();
    let mut r = Reader::of(s, at);
    while let Some((field, v)) = r.next()? {
        match (field, v) {
            (1, v) => varints(v, &mut t.dims)?,
            (2, v) => t.data_type = int(v)? as i32,
            (4, v) => floats(v, &mut t.float_data)?,
            (5, v) => {
                let mut xs = Vec::new();
                varints(v, &mut xs)?;
                // int32 fields are sign-extended varints on the wire: the low 32 bits are the value
                t.int32_data.extend(xs.into_iter().map(|x| x as i32));
            }
            (7, v) => varints(v, &mut t.int64_data)?,
            (8, v) => t.name = string(v)?,
            (9, Value::Bytes(s, _)) => t.raw_data = s,
            _ => {}
        }
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    // the protobuf writer for the tests: a key, then a varint / fixed32 / length-delimited payload
    use super::{put_field as bytes, put_varint as varint};
    fn key(out: &mut Vec<u8>, field: u32, wire: u8) {
        varint(out, (u64::from(field) << 3) | u64::from(wire));
    }
    fn int(out: &mut Vec<u8>, field: u32, v: i64) {
        key(out, field, 0);
        varint(out, v as u64);
    }

    /// A model with one node (attributes of each form read) and two initializers, written with
    /// both the packed and the unpacked form of repeated fields and with fields meetcite skips.
    fn model() -> Vec<u8> {
        let mut scale = Vec::new();
        bytes(&mut scale, 8, b"scale");
        key(&mut scale, 1, 0); // dims unpacked
        varint(&mut scale, 2);
        int(&mut scale, 2, 1);
        bytes(&mut scale, 4, &[0, 0, 0x80, 0x3f, 0, 0, 0, 0x40]); // float_data packed: 1.0, 2.0
        key(&mut scale, 4, 5); // and one unpacked: 0.5
        scale.extend_from_slice(&0.5f32.to_le_bytes());
        let mut q = Vec::new();
        bytes(&mut q, 8, b"w");
        let mut dims = Vec::new();
        varint(&mut dims, 3);
        varint(&mut dims, 1);
        bytes(&mut q, 1, &dims); // dims packed
        int(&mut q, 2, 3);
        bytes(&mut q, 9, &[1, 0xff, 7]);
        bytes(&mut q, 12, b"doc, skipped");
        let mut axis = Vec::new();
        bytes(&mut axis, 1, b"axis");
        int(&mut axis, 3, -1);
        let mut eps = Vec::new();
        bytes(&mut eps, 1, b"epsilon");
        key(&mut eps, 2, 5);
        eps.extend_from_slice(&1e-12f32.to_le_bytes());
        key(&mut eps, 21, 1); // a fixed64 field nobody reads
        eps.extend_from_slice(&[0; 8]);
        let mut perm = Vec::new();
        bytes(&mut perm, 1, b"perm");
        let mut packed = Vec::new();
        for v in [0u64, 2, 1] {
            varint(&mut packed, v);
        }
        bytes(&mut perm, 8, &packed);
        let mut value = Vec::new();
        bytes(&mut value, 1, b"value");
        bytes(&mut value, 5, &scale);
        let mut node = Vec::new();
        bytes(&mut node, 1, b"w");
        bytes(&mut node, 1, b"scale");
        bytes(&mut node, 2, b"y");
        bytes(&mut node, 3, b"dq0");
        bytes(&mut node, 4, b"DequantizeLinear");
        for a in [&axis, &eps, &perm, &value] {
            bytes(&mut node, 5, a);
        }
        bytes(&mut node, 7, b"ai.onnx");
        let mut input = Vec::new();
        bytes(&mut input, 1, b"input_ids");
        bytes(&mut input, 2, b"\x0a\x02\x08\x07"); // a type, skipped
        let mut graph = Vec::new();
        bytes(&mut graph, 1, &node);
        bytes(&mut graph, 2, b"g");
        bytes(&mut graph, 5, &q);
        bytes(&mut graph, 5, &scale);
        bytes(&mut graph, 11, &input);
        bytes(&mut graph, 12, b"\x0a\x01y");
        let mut m = Vec::new();
        int(&mut m, 1, 8);
        bytes(&mut m, 2, b"pytorch");
        bytes(&mut m, 7, &graph);
        m
    }

    #[test]
    fn reads_each_field_form() {
        let file = model();
        let m = read(&file).unwrap();
        let g = m.graph.unwrap();
        assert_eq!(g.node.len(), 1);
        let n = &g.node[0];
        assert_eq!(
            (n.input.as_slice(), n.output.as_slice(), n.name.as_str(), n.op_type.as_str(), n.domain.as_str()),
            (&["w".to_string(), "scale".into()][..], &["y".to_string()][..], "dq0", "DequantizeLinear", "ai.onnx")
        );
        let a: Vec<&str> = n.attribute.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(a, ["axis", "epsilon", "perm", "value"]);
        assert_eq!(n.attribute[0].i, -1);
        assert_eq!(n.attribute[1].f, 1e-12);
        assert_eq!(n.attribute[2].ints, [0, 2, 1]);
        let t = n.attribute[3].t.as_ref().unwrap();
        assert_eq!((t.name.as_str(), t.dims.as_slice(), t.float_data.as_slice()), ("scale", &[2i64][..], &[1.0f32, 2.0, 0.5][..]));
        assert_eq!(g.initializer.len(), 2);
        let w = &g.initializer[0];
        assert_eq!((w.name.as_str(), w.dims.as_slice(), w.data_type, w.raw_data), ("w", &[3i64, 1][..], 3, &[1u8, 0xff, 7][..]));
        // raw_data borrows the file's bytes
        let at = w.raw_data.as_ptr() as usize - file.as_ptr() as usize;
        assert_eq!(&file[at..at + 3], &[1, 0xff, 7]);
        assert_eq!(g.input.iter().map(|i| i.name.as_str()).collect::<Vec<_>>(), ["input_ids"]);
        assert_eq!(g.output.iter().map(|i| i.name.as_str()).collect::<Vec<_>>(), ["y"]);
    }

    #[test]
    fn every_truncation_is_an_error_or_a_shorter_model_never_a_panic() {
        let file = model();
        let mut errors = 0;
        for end in 0..file.len() {
            match read(&file[..end]) {
                Err(e) => {
                    errors += 1;
                    assert!(e.at <= end, "{e} past the end {end}");
                }
                Ok(m) => assert!(m.graph.is_none(), "a cut at {end} inside the graph read as a graph"),
            }
        }
        // every cut inside the graph message (the file's last field) is an error
        assert!(errors >= file.len() - 12, "{errors} errors for {} cuts", file.len());
    }

    #[test]
    fn malformed_input_is_an_error_with_its_offset() {
        assert_eq!(read(&[]).unwrap_err().what, "no protobuf fields");
        // a group (wire type 3) at byte 0
        assert_eq!(read(&[0x0b]).unwrap_err(), DecodeError { at: 1, what: "unsupported wire type (groups are not ONNX)" });
        // a length running past the end
        let e = read(&[0x3a, 0x05, 0x0a]).unwrap_err();
        assert_eq!(e.what, "field runs past the end of its message");
        // an eleven-byte varint
        let e = read(&[0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]).unwrap_err();
        assert_eq!(e.what, "varint longer than 10 bytes");
        // a name that is not UTF-8, inside graph -> node: the offset is the file's
        let mut node = Vec::new();
        bytes(&mut node, 4, &[0xc3, 0x28]);
        let mut graph = Vec::new();
        bytes(&mut graph, 1, &node);
        let mut m = Vec::new();
        bytes(&mut m, 7, &graph);
        assert_eq!(read(&m).unwrap_err(), DecodeError { at: 6, what: "string field is not UTF-8" });
        // HTML is no model
        assert!(read(b"<!doctype html><html></html>").is_err());
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(b in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512)) {
            let _ = read(&b);
        }

        #[test]
        fn a_flipped_byte_never_panics(at in 0usize..400, x in 1u8..=255) {
            let mut file = model();
            let at = at % file.len();
            file[at] ^= x;
            let _ = read(&file);
        }
    }
}
