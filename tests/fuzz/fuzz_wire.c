/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * libFuzzer target for the wire decoders.  Beyond "no crash, no
 * out-of-bounds access" (ASan/UBSan), it checks that decoding is strict:
 * whatever decodes re-encodes to exactly the same bytes, so two different
 * byte strings never mean the same record.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wire_hello h;
	struct wire_rec r;
	uint8_t buf[WIRE_MSG_SIZE];
	size_t off = 0, used, n;
	uint32_t stream, len;

	if (wire_hello_decode(data, size, &h) == WIRE_OK) {
		wire_hello_encode(buf, &h);
		if (memcmp(buf, data, WIRE_HELLO_LEN) != 0)
			abort();
	}
	if (size >= 4) {
		uint32_t imm = (uint32_t)data[0] << 24 | data[1] << 16 |
		    data[2] << 8 | data[3];

		if (wire_imm_decode(imm, &stream, &len) == WIRE_OK &&
		    wire_imm_encode(stream, len) != imm)
			abort();
	}
	/* A SEND's worth of records, as the engine walks them. */
	if (size > WIRE_MSG_SIZE)
		size = WIRE_MSG_SIZE;
	while (off < size) {
		if (wire_rec_decode(data + off, size - off, &r, &used) != WIRE_OK)
			break;
		if (used == 0 || used > size - off)
			abort();
		n = wire_rec_encode(buf, sizeof(buf), &r);
		if (n != used || memcmp(buf, data + off, n) != 0)
			abort();
		(void)wire_strerror(0);
		(void)wire_reason_str(r.reason);
		off += used;
	}
	return (0);
}
