# A vmlinux-like ELF symbol table: `_text`, global and local functions,
# a local name defined twice, data, a zero-size label.
	.text
	.globl _text
_text:
	.globl vfs_read
	.type vfs_read, @function
vfs_read:
	.skip 48
	.size vfs_read, 48
	.type helper, @function
helper:
	.skip 16
	.size helper, 16
	.globl vfs_write
	.type vfs_write, @function
vfs_write:
	.skip 80
	.size vfs_write, 80
	.globl end_label
end_label:
	.section .text.other,"ax",@progbits
	.set helper_alias, vfs_write
	.globl helper_alias
	.data
	.globl jiffies
	.type jiffies, @object
jiffies:
	.quad 0
	.size jiffies, 8
	.type local_table, @object
local_table:
	.skip 64
	.size local_table, 64
