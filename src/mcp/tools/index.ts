import type { Tool } from '../tool.ts';
import { createContactTool, getContactTool, listContactsTool, updateContactTool } from './contacts.ts';
import { listConversationsTool, sendMessageTool } from './conversations.ts';
import { checkStockTool, listInventoryTool } from './inventory.ts';
import { createOrderTool, getOrderTool, listOrdersTool, updateOrderStatusTool } from './orders.ts';
import { searchTool } from './search.ts';
import {
  contentCalendarTool,
  createSocialPostTool,
  deleteSocialPostTool,
  getSocialPostTool,
  listSocialAccountsTool,
  listSocialPostsTool,
  socialAnalyticsTool,
  updateSocialPostTool,
} from './social.ts';

/** Every tool the MCP server offers, in the order tools/list shows them. */
export const TOOLS: Tool[] = [
  listContactsTool,
  getContactTool,
  createContactTool,
  updateContactTool,
  listOrdersTool,
  getOrderTool,
  createOrderTool,
  updateOrderStatusTool,
  listInventoryTool,
  checkStockTool,
  listConversationsTool,
  sendMessageTool,
  searchTool,
  listSocialPostsTool,
  getSocialPostTool,
  createSocialPostTool,
  updateSocialPostTool,
  deleteSocialPostTool,
  listSocialAccountsTool,
  socialAnalyticsTool,
  contentCalendarTool,
];
