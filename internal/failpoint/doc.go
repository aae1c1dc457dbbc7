// Package failpoint parses CAIRN_FAILPOINTS, the crash-test switch of the
// server: a comma-separated list of point=action pairs, such as
//
//	CAIRN_FAILPOINTS=materialize.after-publish=kill
//
// Actions: "kill" sends SIGKILL to the process at that point (a real
// crash, nothing deferred runs); "error" makes the operation fail there
// with ErrInjected, every time; "error-once" only the first time.
// Production runs never set it; cmd/ logs loudly when it is set. The
// package keeps no global state: Parse returns a Set that cmd/ hands to
// the components' hooks.
package failpoint
