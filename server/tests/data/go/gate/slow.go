//go:build slowdown

package gate

// extra is the planted regression: a second checksum of every response.
func extra(n int) uint64 { return checksumAgain(n) }

//go:noinline
func checksumAgain(n int) uint64 {
	var x uint64 = 5
	for i := 0; i < n; i++ {
		x = x*2862933555777941757 + 3037000493
	}
	return x
}
