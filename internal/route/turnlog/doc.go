// Package turnlog keeps each turn's events (route.Event) so a client can
// stream them, and resume after a reconnect: Log, kept in one replica's
// memory (NewMemory) or in Redis Streams shared by all replicas (NewRedis),
// where the replica running a turn keeps a heartbeat and a reader ends a
// turn whose replica died with a turn_lost error event.
package turnlog
