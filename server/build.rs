//! Embeds the built viewer in `embers-server`, so `serve` needs no `--static-dir` and the binary
//! runs from any directory.
//!
//! The viewer is the directory `EMBERS_VIEWER_DIST` names (relative paths from the repository
//! root), else `<repo>/dist` (where `trunk build` writes). Without an `index.html` there the
//! service is built without a viewer and `/` says how to build one.
//!
//! Every file is compressed here, once, with brotli and gzip (level 9); a variant is kept only
//! when it is smaller. Brotli's quality 11 is for release builds (what users run: the page's
//! wasm is ~10% smaller than at quality 9) and takes ~20 s here; debug builds, rebuilt whenever
//! the viewer changes, use quality 9 (under a second). The generated `$OUT_DIR/viewer.rs` holds one
//! `EmbeddedFile` per file (see `src/http/embedded.rs`) whose bytes are `include_bytes!` of the
//! file and of its compressed variants.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The environment variable naming the viewer to embed.
const DIST_VAR: &str = "EMBERS_VIEWER_DIST";

fn main() {
    println!("cargo:rerun-if-env-changed={DIST_VAR}");
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let dist = viewer_dir();
    // Cargo scans a watched directory for changes; a missing path would make it rerun this
    // script (and rebuild the service) on every build. So the default directory is created
    // empty: a later `trunk build` into it changes it, and the viewer is embedded then.
    if std::env::var_os(DIST_VAR).is_none() && !dist.exists() {
        let _ = std::fs::create_dir_all(&dist);
    }
    println!("cargo:rerun-if-changed={}", dist.display());
    let code = if dist.join("index.html").is_file() {
        let mut files = Vec::new();
        collect(&dist, &dist, &mut files);
        files.sort();
        generate(&dist, &files, &out)
    } else {
        println!(
            "cargo:warning=no viewer at {} (no index.html): embers-server is built without one; \
             build it with `trunk build --release` (or set {DIST_VAR}) and build again",
            dist.display()
        );
        format!(
            "/// No viewer was embedded.\npub static VIEWER: Option<&[EmbeddedFile]> = None;\n\
             /// Where the build looked.\npub const LOOKED_IN: &str = {:?};\n",
            dist.display().to_string()
        )
    };
    std::fs::write(out.join("viewer.rs"), code).expect("write viewer.rs");
}

/// The directory to embed.
fn viewer_dir() -> PathBuf {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let root = manifest.parent().unwrap_or(&manifest).to_path_buf();
    match std::env::var_os(DIST_VAR) {
        Some(dir) if !dir.is_empty() => root.join(dir),
        _ => root.join("dist"),
    }
}

/// Every file under `dir`, as paths relative to `root`.
fn collect(root: &Path, dir: &Path, files: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        // Trunk stages a build in `dist/.stage`; hidden entries are never the viewer's.
        if path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        {
            continue;
        }
        if path.is_dir() {
            collect(root, &path, files);
        } else if path.is_file() {
            files.push(path.strip_prefix(root).expect("under root").to_path_buf());
        }
    }
}

/// The Rust source declaring every file of `dist`, writing the compressed variants to `out`.
fn generate(dist: &Path, files: &[PathBuf], out: &Path) -> String {
    let variants = out.join("viewer");
    std::fs::create_dir_all(&variants).expect("create the variants directory");
    let mut code = String::from("/// The embedded viewer, one entry per file.\n");
    code.push_str("pub static VIEWER: Option<&[EmbeddedFile]> = Some(&[\n");
    for (i, rel) in files.iter().enumerate() {
        let source = dist.join(rel);
        let bytes = std::fs::read(&source).unwrap_or_else(|e| panic!("{}: {e}", source.display()));
        let url = format!(
            "/{}",
            rel.components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/")
        );
        let br = variant(&variants, i, "br", &bytes, brotli_of(&bytes));
        let gz = variant(&variants, i, "gz", &bytes, gzip_of(&bytes));
        let etag = format!("\"{:016x}\"", xxhash_rust::xxh3::xxh3_64(&bytes));
        let _ = writeln!(
            code,
            "    EmbeddedFile {{ path: {url:?}, etag: {etag:?}, raw: include_bytes!({:?}), \
             br: {br}, gzip: {gz} }},",
            source.display().to_string()
        );
    }
    code.push_str("]);\n/// Where the build looked.\n");
    let _ = writeln!(
        code,
        "pub const LOOKED_IN: &str = {:?};",
        dist.display().to_string()
    );
    code
}

/// `Some(include_bytes!(..))` of a compressed variant when it is smaller, else `None`.
fn variant(dir: &Path, i: usize, ext: &str, raw: &[u8], packed: Vec<u8>) -> String {
    // Below ~5% saved the variant is not worth its bytes in the binary.
    if packed.len() + raw.len() / 20 >= raw.len() {
        return "None".to_owned();
    }
    let path = dir.join(format!("{i}.{ext}"));
    std::fs::write(&path, packed).expect("write a compressed variant");
    format!("Some(include_bytes!({:?}))", path.display().to_string())
}

fn brotli_of(bytes: &[u8]) -> Vec<u8> {
    let release = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    let mut out = Vec::new();
    let params = brotli::enc::BrotliEncoderParams {
        quality: if release { 11 } else { 9 },
        lgwin: 22,
        ..Default::default()
    };
    brotli::BrotliCompress(&mut &bytes[..], &mut out, &params).expect("brotli into memory");
    out
}

fn gzip_of(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(bytes).expect("gzip into memory");
    encoder.finish().expect("gzip into memory")
}
