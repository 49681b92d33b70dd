// Package harm holds the harm test of the read sandbox: proof by execution
// of what the sandbox catches when the classifier is wrong.
//
// Every command the classifier's corpus (policy/command/testdata/commands)
// labels a write runs twice in a throwaway namespace (its own user, mount,
// PID, IPC, UTS, network and cgroup namespaces, the machine's files seen
// through an overlay whose changes land in memory, fake files where the
// command's targets are): once through the real read path (the local
// transport, sandbox required, as a read runs on vigil's machine; the
// classifier's verdict is not asked), once as root without the sandbox.
// A command is a local write when the unconfined run changed a file, a
// process, an IPC object, a mount, an interface or the host name there; the
// test asserts that the confined run changed nothing, whatever the
// command, and reports how many local writes it caught. Commands the
// sandbox cannot stop are listed, with the reason, in the test's exception
// table.
//
// The package has no code outside its tests.
package harm
