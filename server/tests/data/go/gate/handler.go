// A request handler with a benchmark, for the CI gate's worked example (docs/ci-gate.md) and
// its test (server/tests/diff_gate.rs): `go test -bench . -cpuprofile cpu.pb.gz` profiles it,
// and `embers-server diff` compares the profile with the main branch's. Built with
// `-tags slowdown`, it carries a planted regression: checksumAgain, about a quarter of the time.
package gate

// parse, compute and encode share the work of one request about 30:45:25.
//
//go:noinline
func parse(n int) uint64 {
	var x uint64 = 1
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

//go:noinline
func compute(n int) uint64 {
	var x uint64 = 7
	for i := 0; i < n; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

//go:noinline
func encode(n int) uint64 {
	var x uint64 = 3
	for i := 0; i < n; i++ {
		x = (x >> 1) ^ (-(x & 1) & 0xd800000000000000)
	}
	return x
}

// Handle serves one request.
func Handle() uint64 {
	return parse(30_000) + compute(45_000) + encode(25_000) + extra(37_000)
}
