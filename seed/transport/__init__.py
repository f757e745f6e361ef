"""The wire: the .proto service, tensor encoding, gRPC server and client helpers."""
