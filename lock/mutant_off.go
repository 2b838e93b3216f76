//go:build !lockmutant

package lock

// skipClaimValidation is false in every real build. The fault harness
// (internal/chaos) builds connect-init with -tags lockmutant, which turns
// it true, to prove that it catches a lock whose claims are not validated:
// a harness that cannot tell that lock from this one proves nothing.
const skipClaimValidation = false
