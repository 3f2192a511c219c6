"""What the LiteDAV boards share: the BIOS in ROM boots the firmware from SPI flash into external
RAM (SDRAM/DDR3), and a flash region holds the calendar store. Each board module sets its own
flash offsets and calls these."""


def soc_kwargs(rom_size=0x8000):
    """SoCCore arguments: BIOS in ROM, SRAM for its stack, main RAM from the board's memory.
    rom_size: the BIOS's block RAM; a BIOS with DDR3 calibration (liblitedram's read leveling)
    needs more than one with SDR SDRAM."""
    return dict(
        integrated_rom_size      = rom_size,
        integrated_sram_size     = 0x2000,
        integrated_main_ram_size = 0,
        uart_name                = "serial",
        uart_baudrate            = 115200,
    )


def add_flash_layout(soc, firmware_offset, store_offset, store_size):
    """Tell the BIOS where the boot image is and the firmware where the store is (SoC constants),
    once the SPI flash has been added to the bus."""
    flash_base = soc.bus.regions["spiflash"].origin
    soc.add_constant("FLASH_BOOT_ADDRESS", flash_base + firmware_offset)
    soc.add_constant("LITEDAV_FLASH_STORE_BASE", flash_base + store_offset)
    soc.add_constant("LITEDAV_FLASH_STORE_SIZE", store_size)
